/** The codes of evalferry's errors, which callers branch on, and the exit code the CLI gives each (SPEC section 5). */

export type ErrorCode =
  | 'E_PARSE' // the container could not be parsed (broken JSON, YAML, CSV quoting, Parquet)
  | 'E_FIELD' // a record parsed but a field is missing or has the wrong type
  | 'E_LAYOUT' // a case needs a column that the layout, chosen from the first cases, lacks (see LayoutError)
  | 'E_DUPLICATE_ID'
  | 'E_LOSSY' // --strict and something could not be carried
  | 'E_USAGE'
  | 'E_DETECT'
  | 'E_IO'
  | 'E_FETCH'
  | 'E_REF'
  | 'E_CACHE'
  | 'E_OFFLINE'
  | 'E_UNSAFE'
  | 'E_AUTH'


export const EXIT_BY_CODE: Record<ErrorCode, 1 | 2 | 3> = {
  E_PARSE: 1,
  E_FIELD: 1,
  E_LAYOUT: 1,
  E_DUPLICATE_ID: 1,
  E_LOSSY: 1,
  E_DETECT: 1,
  E_USAGE: 2,
  E_IO: 1,
  E_FETCH: 3,
  E_REF: 3,
  E_CACHE: 3,
  E_OFFLINE: 3,
  E_UNSAFE: 3,
  E_AUTH: 3,
}
