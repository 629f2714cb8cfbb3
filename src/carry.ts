/**
 * Lossless carrying (SPEC section 3). Writing a case, the case encoder encodes it, decodes the record
 * again and compares: every canonical field that did not come back whole travels under
 * `metadata.evalferry`, which every adapter maps to its format's free-form slot. Reading, the
 * carried fields replace what the record expressed, so the next writer sees the original case.
 * A carried `null` means the field was absent. Extras are compared and carried per format.
 */
import { CARRY_KEY, CASE_FIELDS, hasKeys, isJsonObject, type EvalCase, type Extras, type JsonObject, type JsonValue } from './model.ts'

/**
 * The carry's key for metadata values alone: a table cell gives back `3` as `"3"`, and only that
 * value travels, not every column of the row again. The keys came back, in their order; reading,
 * the values are put back in their place.
 */
export const METADATA_VALUES = '$metadata'

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b)
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const ao = a as Record<string, unknown>
  const bo = b as Record<string, unknown>
  let count = 0
  for (const key in ao) {
    if (ao[key] === undefined) continue
    count++
    if (!deepEqual(ao[key], bo[key])) return false
  }
  for (const key in bo) if (bo[key] !== undefined) count--
  return count === 0
}

/**
 * What a carry holds: fields of the case (`generated` names those evalferry made), a table's file
 * keys (`$file`), and the metadata values that did not come back where the keys all did (`$metadata`).
 */
const CARRIED_KEYS = new Set<string>([...CASE_FIELDS, '$file', METADATA_VALUES])

/**
 * Whether `value`, found under `metadata.evalferry`, is a carry: an object of the keys a carry
 * holds. Any other value there (`{"own": true}`, `{}`, text) is the case's own metadata.
 */
export function isCarry(value: unknown): value is JsonObject {
  if (!isJsonObject(value)) return false
  let keys = 0
  for (const key in value) {
    if (!CARRIED_KEYS.has(key)) return false
    keys++
  }
  return keys > 0
}

/** Takes `metadata.evalferry` off a freshly decoded case and puts the carried fields back. */
export function applyCarry(c: EvalCase): EvalCase {
  const carried = c.metadata?.[CARRY_KEY]
  if (!isCarry(carried)) return c
  const metadata = withoutSlot(c.metadata!)
  if (metadata) c.metadata = metadata
  else delete c.metadata
  const target = c as Record<string, unknown>
  for (const [field, value] of Object.entries(carried)) {
    if (field === 'extras' && isJsonObject(value)) applyExtras(c, value)
    else if (field === METADATA_VALUES) {
      if (isJsonObject(value)) c.metadata = { ...c.metadata, ...value }
    } else if (value === null) delete target[field]
    else target[field] = value
  }
  return c
}

/**
 * `c` without a carry at `metadata.evalferry` (a copy, where there is one): a value of the case's
 * own there is written as it is, and reads back as itself.
 */
export function withoutCarrySlot(c: EvalCase): EvalCase {
  if (!c.metadata || !isCarry(c.metadata[CARRY_KEY])) return c
  const out: EvalCase = { ...c, metadata: withoutSlot(c.metadata)! }
  if (!out.metadata) delete out.metadata
  return out
}

/** `metadata` without its carry's key, or undefined when nothing else is left. */
function withoutSlot(metadata: JsonObject): JsonObject | undefined {
  const { [CARRY_KEY]: _slot, ...rest } = metadata
  return Object.keys(rest).length ? rest : undefined
}

/** Extras are carried per format, so that what the reading format adds itself stays its own. */
function applyExtras(c: EvalCase, carried: JsonObject): void {
  const extras = { ...c.extras }
  for (const [format, value] of Object.entries(carried)) {
    if (isJsonObject(value)) extras[format] = value
    else delete extras[format]
  }
  if (Object.keys(extras).length) c.extras = extras
  else delete c.extras
}

/** The fields of `original` that `roundTripped` did not give back, as carried values. */
export function lostFields(original: EvalCase, roundTripped: EvalCase, ignore: readonly string[] = []): JsonObject {
  const carried: JsonObject = {}
  const a = original as Record<string, unknown>
  const b = roundTripped as Record<string, unknown>
  // Every key of either side, once: the original's, then those only the round trip has.
  for (const key in a) compare(carried, a, b, key, ignore)
  for (const key in b) if (!Object.hasOwn(a, key)) compare(carried, a, b, key, ignore)
  return carried
}

/** Puts into `carried` what `b` (the round trip) does not give back of `a`'s field `key`. */
function compare(carried: JsonObject, a: Record<string, unknown>, b: Record<string, unknown>, key: string, ignore: readonly string[]): void {
  if (key === 'generated' || ignore.includes(key)) return
  if (key === 'extras') {
    const extras = lostExtras((a.extras ?? {}) as Extras, (b.extras ?? {}) as Extras)
    if (extras) carried.extras = extras
  } else if (!deepEqual(a[key], b[key])) {
    // Metadata whose keys came back in order carries only the values that did not.
    if (key === 'metadata' && isJsonObject(a.metadata) && isJsonObject(b.metadata) && sameKeys(a.metadata, b.metadata)) carried[METADATA_VALUES] = lostValues(a.metadata, b.metadata)
    else carried[key] = a[key] === undefined ? null : (a[key] as JsonValue)
  }
}

/** Whether two objects have the same keys in the same order. */
function sameKeys(a: JsonObject, b: JsonObject): boolean {
  const ak = Object.keys(a)
  const bk = Object.keys(b)
  return ak.length === bk.length && ak.every((k, i) => k === bk[i])
}

/** The values of `a` that `b` holds otherwise at the same keys. */
function lostValues(a: JsonObject, b: JsonObject): JsonObject {
  const lost: JsonObject = {}
  for (const key of Object.keys(a)) if (!deepEqual(a[key], b[key])) lost[key] = a[key]!
  return lost
}

function lostExtras(a: Extras, b: Extras): JsonObject | undefined {
  let lost: JsonObject | undefined
  for (const format of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (!deepEqual(a[format], b[format])) (lost ??= {})[format] = a[format] ?? null
  }
  return lost
}

/** Whether `c` has a value of its own at `metadata.evalferry`, which a carry would take the place of. */
export function hasOwnSlot(c: EvalCase): boolean {
  return c.metadata !== undefined && CARRY_KEY in c.metadata && !isCarry(c.metadata[CARRY_KEY])
}

/** `c` with `carried` under `metadata.evalferry`. */
export function withCarry(c: EvalCase, carried: JsonObject): EvalCase {
  return { ...c, metadata: { ...(c.metadata ?? {}), [CARRY_KEY]: carryValue(c, carried) } }
}

/** What `withCarry` puts under `metadata.evalferry`. */
export function carryValue(c: EvalCase, carried: JsonObject): JsonObject {
  // Taking the slot off leaves no metadata where it is empty; an empty object that was there is carried.
  return isJsonObject(c.metadata) && !hasKeys(c.metadata) && !('metadata' in carried) ? { ...carried, metadata: {} } : carried
}
