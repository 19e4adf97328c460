// The rows killed-group-child.ts writes for one block and killed-group-commit.test.ts expects (not a test file).
/** The rows of one block: the same whoever writes them (the parent checks them). */
export function blockRows(block: number, count: number) {
  return Array.from({ length: count }, (_, i) => ({
    chain_id: 1,
    block_number: block,
    log_idx: i,
    token: `0x${block.toString(16).padStart(40, '0')}`,
    from_address: `0x${'11'.repeat(20)}`,
    to_address: `0x${'22'.repeat(20)}`,
    amount: `${block}.${i}`,
  }));
}
