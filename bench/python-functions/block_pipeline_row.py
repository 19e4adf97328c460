"""bench/functions/block_pipeline_row.ts in Python, for `bench/block-pipeline.ts --language python`: the
event's token_transfers row, after reading the event's block through `ctx.io.get` (the task's read
cache), so both languages do the same work per call. Kept out of bench/functions/: one name in two
languages is a load error.
"""

import re

ADDRESS_WORD = re.compile(r"^0x0{24}([0-9a-fA-F]{40})\Z")


def _address(word, what, idx):
    m = ADDRESS_WORD.match(word) if isinstance(word, str) else None
    if m is None:
        raise ValueError("event %s: %s topic is not an address word" % (idx, what))
    return "0x%s" % m.group(1).lower()


async def main(ctx, event):
    key = {"chain_id": event["chain_id"], "number": event["block_number"], "hash": event["block_hash"]}
    block = await ctx.io.get("blocks", key)
    if block is None or block["hash"] != event["block_hash"]:
        raise ValueError('event %s: block %r is not in "blocks"' % (event["idx"], key))
    topics = event["topics"] if isinstance(event["topics"], list) else []
    if not isinstance(event["data"], str):
        raise ValueError("event %s: data is not a hex word" % event["idx"])
    return {
        "chain_id": event["chain_id"],
        "block_number": event["block_number"],
        "log_idx": event["idx"],
        "token": event["contract_id"].lower(),
        "from_address": _address(topics[1] if len(topics) > 1 else None, "from", event["idx"]),
        "to_address": _address(topics[2] if len(topics) > 2 else None, "to", event["idx"]),
        "amount": str(int(event["data"], 16)),
    }
