// Type parsers for the PostgreSQL pool (passed as the pool's `types`, so no global pg.types state is
// touched and other pg users in the process are unaffected). int8 (BIGINT, also count(*)) becomes a JS
// number when it is a safe integer; a bigger one stays text, which the value codec reports as BAD_VALUE
// naming its column. Everything else keeps pg's defaults (int4/float8 → number, jsonb → parsed,
// bytea → Buffer, bool → boolean). PG_TYPES_JSON_TEXT is the same but leaves json and jsonb as their text,
// for a scan that writes each row's JSON text itself (row-json.ts driverRowText).

import pg from 'pg';
import type { CustomTypesConfig } from 'pg';

const INT8_OID = 20;
const JSON_OID = 114;
const JSONB_OID = 3802;

function parseInt8(text: string): number | string {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : text;
}

export const PG_TYPES: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary'
      ? parseInt8
      : pg.types.getTypeParser(oid, format)) as CustomTypesConfig['getTypeParser'],
};

const asText = (text: string): string => text;

/** PG_TYPES, with json and jsonb values left as the server's text (valid JSON; not parsed). */
export const PG_TYPES_JSON_TEXT: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    (oid === JSON_OID || oid === JSONB_OID) && format !== 'binary'
      ? asText
      : PG_TYPES.getTypeParser(oid, format)) as CustomTypesConfig['getTypeParser'],
};
