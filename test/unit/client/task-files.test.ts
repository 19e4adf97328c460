// Reading task inputs: one-task JSON files, JSON Lines files, stdin; every problem with FILE[:LINE], a
// syntax error with its line:column.
import { describe, expect, it } from 'vitest';
import { dialAddress } from '../../../src/client/address.js';
import { readTaskSources } from '../../../src/client/task-files.js';

const files: Record<string, string> = {
  '/w/one.json': '{"task_id":"a"}',
  '/w/many.jsonl': '{"task_id":"b"}\n\n  \n{"task_id":"c"}\n{oops\n',
  '/w/bad.json': '{"task_id":',
  '/other/x.ndjson': '{"task_id":"d"}\n',
};
const readFile = (f: string) => {
  const text = files[f];
  if (text === undefined) throw new Error(`ENOENT: ${f}`);
  return text;
};

describe('readTaskSources', () => {
  it('reads JSON and JSON Lines files in order, naming FILE or FILE:LINE, paths outside the cwd absolute', () => {
    const r = readTaskSources(['one.json', 'many.jsonl', 'bad.json', 'missing.json', '/other/x.ndjson'], {
      cwd: '/w',
      readFile,
    });
    expect(r.tasks.map((t) => [t.where, t.json])).toEqual([
      ['one.json', { task_id: 'a' }],
      ['many.jsonl:1', { task_id: 'b' }],
      ['many.jsonl:4', { task_id: 'c' }],
      ['/other/x.ndjson:1', { task_id: 'd' }],
    ]);
    // A syntax error names its line:column (a JSON Lines line: FILE:LINE:COLUMN).
    expect(r.problems.map((p) => p.where)).toEqual(['many.jsonl:5:2', 'bad.json:1:12', 'missing.json']);
    expect(r.problems[0]?.message).toBe('not valid JSON: expected a property name in double quotes, got "o"');
    expect(r.problems[1]?.message).toBe('not valid JSON: expected a value, got the end of the input');
    expect(r.problems[2]?.message).toBe('cannot read file: ENOENT: /w/missing.json');
    // seq orders tasks and problems together, in input order
    const order = [...r.tasks, ...r.problems].sort((a, b) => a.seq - b.seq).map((x) => x.where);
    expect(order).toEqual([
      'one.json',
      'many.jsonl:1',
      'many.jsonl:4',
      'many.jsonl:5:2',
      'bad.json:1:12',
      'missing.json',
      '/other/x.ndjson:1',
    ]);
  });

  it('reads stdin (-) as one task, or as JSON Lines when it is not one JSON value; - only once', () => {
    const one = readTaskSources(['-'], { cwd: '/w', readFile, readStdin: () => '{\n "task_id": "s"\n}\n' });
    expect(one.tasks).toEqual([{ where: '<stdin>', seq: 0, json: { task_id: 's' } }]);
    const lines = readTaskSources(['-', '-'], {
      cwd: '/w',
      readFile,
      readStdin: () => '{"task_id":"x"}\n{"task_id":"y"}\n',
    });
    expect(lines.tasks.map((t) => t.where)).toEqual(['<stdin>:1', '<stdin>:2']);
    expect(lines.problems.map((p) => p.message)).toEqual(['`-` given more than once']);
  });
});

describe('dialAddress', () => {
  it.each([
    [':8080', '127.0.0.1:8080'],
    ['8080', '127.0.0.1:8080'],
    ['0.0.0.0:9', '127.0.0.1:9'],
    ['[::]:9', '[::1]:9'],
    ['10.0.0.7:9090', '10.0.0.7:9090'],
    ['unix:/run/c.sock', 'unix:/run/c.sock'],
  ])('%s → %s', (listen, dial) => expect(dialAddress(listen)).toBe(dial));
});
