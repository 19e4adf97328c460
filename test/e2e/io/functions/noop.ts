// Returns null: a call with no output (the streaming-scan memory test counts calls, not outputs).
export default function noop(): null {
  return null;
}
