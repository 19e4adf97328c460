// For the writable-tables test: one token_transfers upsert (an output table) followed by one upsert of
// the given events row (chain data, not writable by tasks), as one array output. The writer applies them
// in one transaction, so the refused events write must leave no token_transfers row behind either.
import type { CallContext } from '../../../../src/executor/sdk.js';

export default function eventsUpsert(
  _ctx: CallContext,
  eventKey: Record<string, unknown>,
  eventValues: Record<string, unknown>,
): unknown[] {
  const key = { chain_id: eventKey.chain_id, block_number: eventKey.block_number, log_idx: 0 };
  const hex = '0x'.padEnd(42, '0');
  return [
    {
      table: 'token_transfers',
      key,
      values: { token: hex, from_address: hex, to_address: hex, amount: '1' },
    },
    { table: 'events', key: eventKey, values: eventValues },
  ];
}
