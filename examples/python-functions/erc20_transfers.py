"""functions/erc20_transfers.ts in Python: the token_transfers row of an ERC-20 Transfer event, or None
for any other event (None outputs write nothing). Same rows as the TypeScript function.

An ERC-20 Transfer has topics [keccak("Transfer(address,address,uint256)"), from, to], the addresses
left-padded to 32-byte words, and the amount as one 32-byte word in data. ERC-721 shares the selector
but indexes the token id as a fourth topic with empty data: not an ERC-20 transfer, so None.
"""

import re

TRANSFER_SELECTOR = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"

WORD = re.compile(r"^0x[0-9a-fA-F]{64}\Z")
ADDRESS_WORD = re.compile(r"^0x0{24}([0-9a-fA-F]{40})\Z")
ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}\Z")


def _address(word):
    m = ADDRESS_WORD.match(word) if isinstance(word, str) else None
    return m.group(1) if m else None


def main(ctx, event):
    topics = event.get("topics")
    data = event.get("data")
    token = event.get("contract_id")
    if not isinstance(topics, list) or len(topics) != 3:
        return None
    selector, from_word, to_word = topics
    if not isinstance(selector, str) or selector.lower() != TRANSFER_SELECTOR:
        return None
    declared = event.get("selector")
    if declared is not None and (not isinstance(declared, str) or declared.lower() != TRANSFER_SELECTOR):
        return None
    sender, receiver = _address(from_word), _address(to_word)
    if sender is None or receiver is None:
        return None
    if not isinstance(token, str) or not ADDRESS.match(token):
        return None
    if not isinstance(data, str) or not WORD.match(data):
        return None
    return {
        "chain_id": event.get("chain_id"),
        "block_number": event.get("block_number"),
        "log_idx": event.get("idx"),
        "token": token.lower(),
        "from_address": "0x%s" % sender.lower(),
        "to_address": "0x%s" % receiver.lower(),
        "amount": str(int(data, 16)),
    }
