/**
 * The case encoder: one case (or one group's) to the record the target adapter makes of it, that
 * record decoded again, and what it did not give back carried under `evalferry`, or dropped and
 * counted where extras are off.
 */
import { SPELLING_MARKERS } from '../adapters/fields.ts'
import type { Adapter, Container, DecodeContext, EncodeContext, FileLayout } from '../adapters/types.ts'
import { applyCarry, carryValue, deepEqual, hasOwnSlot, lostFields, METADATA_VALUES, withCarry, withoutCarrySlot } from './carry.ts'
import { LIST_KEY, SINGLE_KEY } from './codecs/types.ts'
import { DataError, locate } from './errors.ts'
import { IdSet, ownString, WRITTEN, type StringTable } from './ids.ts'
import { textCellColumns, withCellsOf, withTextCells, type TextColumn } from './mapping.ts'
import { CARRY_KEY, hasKeys, isJsonObject, isMessageList, withHeaderOf, withoutFileKeys, withoutGenerated, type EvalCase, type Extras, type JsonObject, type JsonValue } from './model.ts'
import { countField, type ConversionReport } from './report.ts'
import type { WriteOptions } from './options.ts'
import type { PartPreset } from './parts.ts'
import { attachFileKeys, withoutRecordKeys } from './read.ts'

/**
 * A conversation (DeepEval's turns) of a case without input, as the input messages a format
 * without turns shows it in (LangSmith's chat, evalcase's input, a messages column); the turns
 * themselves, with what a message cannot hold, are carried.
 */
function withTurnsAsInput(c: EvalCase): EvalCase {
  if (c.input !== undefined || !c.turns?.length) return c
  return { ...c, input: c.turns.map((t) => ({ role: t.role, content: t.content, ...(t.tools_called?.length ? { tool_calls: t.tools_called } : {}) })) }
}

/**
 * The tool calls of an expected assistant message, as the expected tools of a format that holds
 * them apart (DeepEval's expected_tools): the message keeps its text, and one of tool calls alone
 * leaves none. What this changes is carried.
 */
function withExpectedTools(c: EvalCase): EvalCase {
  const expected = c.expected_output
  if (c.expected_tools !== undefined || !isMessageList(expected) || !expected.some((m) => m.tool_calls?.length)) return c
  const expected_tools = expected.flatMap((m) => m.tool_calls ?? [])
  const said = expected.filter((m) => m.content !== '').map(({ tool_calls: _calls, ...m }) => m)
  const { expected_output: _expected, ...rest } = c
  return { ...rest, ...(said.length ? { expected_output: said } : {}), expected_tools }
}

/** A file's first cases with the header another table format read as `adapter`'s own (see `Adapter.headerOf`). */
export function withAdoptedHeader(adapter: Adapter, container: Container, cases: EvalCase[]): EvalCase[] {
  const first = cases[0]
  if (!adapter.headerOf || !first) return cases
  const adopted = withHeaderOf(first, adapter.name, adapter.headerOf)
  return withAdoptedCells(adapter, container, adopted === first ? cases : [adopted, ...cases.slice(1)])
}

/** Cases with the source cells another table format kept taken as `adapter`'s own, in `container` (see `withCellsOf`). */
function withAdoptedCells(adapter: Adapter, container: Container, cases: EvalCase[]): EvalCase[] {
  const from = adapter.headerOf
  if (!from) return cases
  const options = { format: adapter.name, text: container === 'csv' }
  let adopted: EvalCase[] | undefined
  for (let i = 0; i < cases.length; i++) {
    const c = withCellsOf(cases[i]!, from, options)
    if (c !== cases[i]) (adopted ??= [...cases])[i] = c
  }
  return adopted ?? cases
}

/**
 * A file's first cases as its layout is chosen from them: the header adopted, the lists a CSV held
 * as text kept as text (in the columns `textColumns` names, or those found from these cases and
 * `late` ones the layout must also fit), each shown in the fields `adapter` has.
 */
export function laidOutCases(
  adapter: Adapter,
  container: Container,
  cases: EvalCase[],
  late: EvalCase[] = [],
  textColumns?: readonly TextColumn[],
): { sampled: EvalCase[]; late: EvalCase[]; textColumns: readonly TextColumn[] } {
  const adopted = withAdoptedHeader(adapter, container, cases)
  const columns = textColumns ?? textColumnsOf(adapter, container, late.length ? [...cases, ...late] : cases, adopted[0])
  const asWritten = (cs: EvalCase[]): EvalCase[] => shownIn(adapter, columns.length ? cs.map((c) => withTextCells(c, columns, adapter.name)) : cs)
  return { sampled: asWritten(adopted), late: asWritten(late), textColumns: columns }
}

/**
 * The columns whose lists of one text `adapter` writes as text, from a file's first cases as read
 * (and the first with its header adopted): those a CSV held as text, written as typed rows by a
 * format that takes a CSV's cells as its own (see `textCellColumns`).
 */
export function textColumnsOf(adapter: Adapter, container: Container, cases: EvalCase[], adoptedFirst: EvalCase | undefined): TextColumn[] {
  if (container === 'csv' || !adapter.headerOf?.includes('csv')) return []
  const keys = adoptedFirst?.extras?.[adapter.name]?.$file
  return textCellColumns(cases, isJsonObject(keys) && Array.isArray(keys.columns) ? (keys.columns as string[]) : undefined)
}

/** The cases as `adapter` is given them: in the fields it has for what they hold (see the two above). */
export function shownIn(adapter: Adapter, cases: EvalCase[]): EvalCase[] {
  // Called for every record: the cases themselves when nothing changes, as for nearly all.
  let shown: EvalCase[] | undefined
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i]!
    const asTurns = adapter.holdsTurns ? c : withTurnsAsInput(c)
    const show = adapter.holdsExpectedTools ? withExpectedTools(asTurns) : asTurns
    if (show !== c) (shown ??= [...cases])[i] = show
  }
  return shown ?? cases
}

const GENERATED_ID_SHAPE = /^case-(\d+)(-\d+)?$/

/**
 * Whether an id that a case has, written as record `index`, could be generated for a later record.
 * The id generated for record i is `case-<i + 1>` (`case-<i + 1>-<k>` when that is taken), so only
 * ids of that shape whose number is past `index + 1` can be: ids a file numbers in order never are.
 * (A record of a format that needs ids holds one case: no such format writes groups.)
 */
function mayBeGeneratedLater(id: string, index: number): boolean {
  if (!id.startsWith('case-')) return false
  const match = GENERATED_ID_SHAPE.exec(id)
  return match !== null && Number(match[1]) > index + 1
}

/** What the encoder heeds of the write options, and the id table it may share with the reader. */
export interface EncoderOptions extends Pick<WriteOptions, 'extras' | 'strict' | 'firstRecord'> {
  idTable?: StringTable | undefined
}

/** Encodes one case and carries, under `evalferry`, whatever the record would not give back. */
export class CaseEncoder {
  private readonly decodeContext: DecodeContext
  /**
   * The ids that cases written so far or sampled first really have, and that could be generated for
   * a later record (see `mayBeGeneratedLater`): only these can collide, so memory stays bounded.
   */
  private readonly takenIds = new Set<string>()
  /** The ids written so far, where the target's must be unique (a few bits each where they are numbered). */
  private readonly usedIds: IdSet
  /** Records of the dataset before this file's first (see `WriteOptions.firstRecord`). */
  private readonly idBase: number

  constructor(
    private readonly adapter: Adapter,
    container: Container,
    layout: FileLayout,
    private readonly options: EncoderOptions,
    private readonly report: ConversionReport,
    file: string,
    hasSidecar: boolean,
    sample: EvalCase[],
    /** The columns whose lists of one text are written as text (see `textColumnsOf`). */
    private readonly textColumns: readonly TextColumn[],
    private readonly part?: PartPreset,
  ) {
    this.usedIds = new IdSet(options.idTable, WRITTEN)
    this.idBase = options.firstRecord ?? 0
    // A sampled case may come after the first records that get an id: its id counts from the start.
    for (const c of sample) if (c.id !== undefined && !c.generated?.includes('id') && mayBeGeneratedLater(c.id, this.idBase - 1)) this.takenIds.add(c.id)
    this.decodeContext = {
      file,
      container,
      header: headerReadBack(container, layout, hasSidecar),
      index: 0,
      columns: layout.columns ?? [],
      ...(layout.schemaMetadata ? { schemaMetadata: layout.schemaMetadata } : {}),
      state: {},
      warn: () => {},
    }
  }

  /**
   * The record of `originals` (one case, or with `grouped` the cases of one group). `first`: the
   * first record of the file, whose first case's `$file` the written header stands for.
   */
  encode(originals: EvalCase[], ctx: EncodeContext, first: boolean, grouped = false): JsonObject {
    const adapter = this.adapter
    const generated: string[][] = []
    const needsId = adapter.requires?.includes('id') === true
    const renamed: (string | undefined)[] = []
    const adopted = first ? withAdoptedHeader(adapter, ctx.container, originals) : withAdoptedCells(adapter, ctx.container, originals)
    const textColumns = this.textColumns
    const cases = (textColumns.length ? adopted.map((c) => withTextCells(c, textColumns, adapter.name)) : adopted).map((original) => {
      // A copy only where something changes: generated fields go, a missing id comes.
      let c = original.generated !== undefined || (needsId && original.id === undefined) ? withoutGenerated(original) : original
      const made: string[] = []
      if (needsId && c.id === undefined) {
        c.id = original.id ?? this.freshId(this.idBase + ctx.index)
        if (original.id === undefined) this.part?.generatedIds.push(c.id)
        made.push('id')
      } else if (c.id !== undefined && mayBeGeneratedLater(c.id, this.idBase + ctx.index)) {
        const id = ownString(c.id)
        this.takenIds.add(id)
        if (this.part && needsId) this.part.writtenIds.push(id)
      }
      // A target whose ids must be unique gets a fresh one for an id used before; the case's own travels.
      let was: string | undefined
      if (adapter.uniqueIds && c.id !== undefined) {
        if (!this.usedIds.add(c.id)) {
          was = c.id
          c = c === original ? { ...original } : c
          for (let k = 2; !this.usedIds.add(c.id!); k++) c.id = `${was}-${k}`
          ctx.warn(`the id "${was}" is an earlier case's, and ${adapter.name} ids are unique: written as "${c.id}", with "${was}" carried`, 'id')
        }
        this.part?.uniqueIds.push(ownString(c.id!))
      }
      renamed.push(was)
      generated.push(made)
      return c
    })
    const fileKeys = first ? cases[0]?.extras?.[adapter.name]?.$file : undefined
    // A table's layout has read its first row back: the file keys it did not find there ride on that row.
    const layoutCarry = ctx.layout?.fileCarry
    const layoutCarries = layoutCarry !== undefined && hasKeys(layoutCarry)
    if (fileKeys !== undefined && layoutCarries && ctx.extras !== false) countField(this.report.carried, `extras.${adapter.name}.$file`)
    // The record never repeats the file keys, which reach the header through `layout`.
    const own = cases.map((c, i) => (i === 0 && fileKeys !== undefined ? withoutFileKeys(c, adapter.name) : c))
    const encodeAll = (cs: EvalCase[], context = ctx): JsonObject => {
      const xs = shownIn(adapter, cs)
      return grouped && adapter.encodeGroup ? adapter.encodeGroup(xs, context) : adapter.encode(xs[0]!, context)
    }

    // A carry-shaped value at the carry's key would be taken for a carry: it is left out here, so
    // that the comparison carries the whole metadata, that value with it.
    const encoded = own.map(withoutCarrySlot)
    const record = encodeAll(encoded)
    this.decodeContext.index = ctx.index
    let backs: EvalCase[]
    // File keys the written header gives back need no carry (keys it adds, like a dialect's list key, are the writer's); else all travel.
    const compared = [...own]
    try {
      const decoded = adapter.decode(record, this.decodeContext)
      backs = Array.isArray(decoded) ? decoded : [decoded]
      for (const back of backs) applyCarry(back)
      const givenBack =
        fileKeys === undefined ||
        (layoutCarry !== undefined ? !layoutCarries || ctx.extras !== false : givesBack(withoutRecordKeys(this.decodeContext.header, adapter.recordKeys), fileKeys))
      if (backs[0] && !givenBack) {
        compared[0] = cases[0]!
        attachFileKeys(backs[0], adapter, this.decodeContext.header)
      }
    } catch (error) {
      throw locate(error, {})
    }
    const carriedAll = compared.map((c, i) => {
      const carried = lostFields(c, backs[i] ?? {}, generated[i])
      if (renamed[i] !== undefined) carried.id = renamed[i]
      if (generated[i]!.length) carried.generated = generated[i]!
      // A carry takes the place of the case's own value at its key: the metadata travels in it, that value with it.
      if (this.options.extras !== false && hasKeys(carried) && !('metadata' in carried) && hasOwnSlot(c)) {
        carried.metadata = c.metadata!
        delete carried[METADATA_VALUES]
      }
      return carried
    })
    if (!carriedAll.some(hasKeys)) return record
    // A set: a wide table's row carries a field per column, thousands of them.
    const lostSet = new Set<string>()
    for (const [i, carried] of carriedAll.entries()) for (const name of fieldNames(carried, backs[i]?.extras)) lostSet.add(name)
    const lost = [...lostSet]

    if (this.options.extras === false) {
      // How the source spelled its data is no data: written in the target's own spelling, it is neither dropped nor lossy.
      const dropped = lost.filter((name) => !isSpelling(name))
      for (const field of dropped) countField(this.report.dropped, field)
      if (this.options.strict && dropped.length) {
        throw new DataError('E_LOSSY', `${adapter.name} cannot hold ${dropped.join(', ')}, and --strict forbids dropping it`, { field: dropped[0]! })
      }
      return record
    }
    for (const field of lost) countField(this.report.carried, field)
    // A record of one case the target can place its carry in is not encoded again; a case with a
    // value of its own at the carry's key, which the carry takes the place of, is.
    const single = own.length === 1 && !(grouped && adapter.encodeGroup) && !(own[0]!.metadata && CARRY_KEY in own[0]!.metadata)
    if (single && adapter.placeCarry && carryPlacing.on) {
      const placed = adapter.placeCarry(record, carryValue(own[0]!, carriedAll[0]!), encoded[0]!, ctx)
      if (placed) {
        carryPlacing.placed++
        return placed
      }
    }
    // The same case again with its carry: its warnings were given the first time.
    return encodeAll(
      own.map((c, i) => (hasKeys(carriedAll[i]!) ? withCarry(c, carriedAll[i]!) : c)),
      { ...ctx, warn: () => {} },
    )
  }

  /** `case-<n>`, unless a case written so far or among the first ones sampled already has that id. */
  private freshId(index: number): string {
    let id = `case-${index + 1}`
    for (let k = 2; this.takenIds.has(id); k++) id = `case-${index + 1}-${k}`
    return id
  }
}

/**
 * Records whose carry the target placed in the record already written (see `Adapter.placeCarry`),
 * not encoding the case again; `on` is turned off by tests that compare the bytes both ways give.
 */
export const carryPlacing = { on: true, placed: 0 }

/** Whether a carried field's name (`extras.deepeval.$keys`) is a spelling marker. */
function isSpelling(name: string): boolean {
  const parts = name.split('.')
  return parts.length === 3 && parts[0] === 'extras' && SPELLING_MARKERS.has(parts[2]!)
}

/**
 * The fields a carry holds, as the report names them: extras down to each format's own keys that
 * `given` (the extras read back from the record) lacks or holds otherwise.
 */
function fieldNames(carried: JsonObject, given: Extras = {}): string[] {
  const names: string[] = []
  for (const [field, value] of Object.entries(carried)) {
    if (field === 'generated') continue
    if (field === METADATA_VALUES && isJsonObject(value)) {
      for (const key of Object.keys(value)) names.push(`metadata.${key}`)
      continue
    }
    if (field !== 'extras' || !isJsonObject(value)) {
      names.push(field)
      continue
    }
    for (const [format, own] of Object.entries(value)) {
      if (!isJsonObject(own) || !Object.keys(own).length) {
        names.push(`extras.${format}`)
        continue
      }
      // A format's extras travel whole; the keys named are those the written record did not give back.
      const back = given[format] ?? {}
      for (const key of new Set([...Object.keys(own), ...Object.keys(back)])) if (!deepEqual(own[key], back[key])) names.push(`extras.${format}.${key}`)
    }
  }
  return names
}

/** The header a reader of the written file sees: what its container (or JSON Lines sidecar) keeps of the layout's. */
function headerReadBack(container: Container, layout: FileLayout, hasSidecar: boolean): JsonObject {
  const header = layout.header ?? {}
  switch (container) {
    case 'json':
      if (layout.single) return { [SINGLE_KEY]: true }
      return layout.listKey === undefined ? {} : { ...header }
    case 'yaml':
      return { ...header, [LIST_KEY]: layout.listKey ?? '' }
    case 'jsonl':
      return hasSidecar ? sidecarHeader(layout) : {}
    default:
      return {}
  }
}

/** True when `header` holds every key of `fileKeys` with its value. */
function givesBack(header: JsonObject, fileKeys: JsonValue): boolean {
  return isJsonObject(fileKeys) && Object.entries(fileKeys).every(([k, v]) => Object.hasOwn(header, k) && deepEqual(header[k], v))
}

/** The keys a JSON Lines sidecar holds: the layout's header without the `$` markers. */
export function sidecarHeader(layout: FileLayout): JsonObject {
  return Object.fromEntries(Object.entries(layout.header ?? {}).filter(([k]) => !k.startsWith('$')))
}

/** The context a target adapter encodes in, for `container` and the write options it heeds. */
export function encodeContextOf(container: Container, options: Pick<WriteOptions, 'dialect' | 'extras'>, warn: EncodeContext['warn']): EncodeContext {
  return {
    container,
    ...(options.dialect ? { dialect: options.dialect } : {}),
    ...(options.extras === false ? { extras: false as const } : {}),
    index: 0,
    warn,
  }
}
