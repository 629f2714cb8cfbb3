/**
 * YAML documents through the `yaml` package. Reading keeps positions, so an error names the line
 * of the record; writing emits one list item per record, so nothing but the current case is held.
 */
import { isMap, isSeq, LineCounter, parseDocument, Scalar, stringify, type Node } from 'yaml'
import { DataError } from '../errors.ts'
import type { JsonObject } from '../model.ts'
import { LIST_KEY, MAX_RECORD_CHARS, type ByteSource, type ReadOptions, type RecordWriter, type Sink, type SourceRecord } from './types.ts'

/** Aliases expanded per document before it is refused as an alias bomb. */
const MAX_ALIASES = 1000

export async function* readYaml(source: ByteSource, options: ReadOptions): AsyncGenerator<SourceRecord> {
  const { file, recordKeys, header } = options
  let text = ''
  for await (const chunk of source) {
    text += typeof chunk === 'string' ? chunk : chunk.toString('utf8')
    // A YAML document is parsed whole, so its size is what bounds memory.
    if (text.length > MAX_RECORD_CHARS) {
      const line = text.split('\n').length
      throw new DataError('E_PARSE', `the YAML document is longer than ${MAX_RECORD_CHARS / (1024 * 1024)} MiB; YAML is read whole, so write datasets this large as JSON Lines`, { file, line })
    }
  }
  const lineCounter = new LineCounter()
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false, strict: true })
  const where = (offset: number | undefined) => {
    const pos = lineCounter.linePos(offset ?? 0)
    return { file, line: pos.line, column: pos.col }
  }
  const firstError = doc.errors[0]
  if (firstError) {
    throw new DataError('E_PARSE', `invalid YAML: ${firstError.message.split('\n')[0]}`, where(firstError.pos[0]))
  }
  const toJs = (node: unknown): unknown => {
    try {
      return (node as Node).toJS ? (node as Node).toJS(doc, { maxAliasCount: MAX_ALIASES }) : node
    } catch (error) {
      throw new DataError('E_PARSE', `invalid YAML: ${(error as Error).message}`, where((node as Node).range?.[0]))
    }
  }
  const contents = doc.contents
  if (contents === null) throw new DataError('E_PARSE', 'the file is empty; expected a YAML mapping or list', { file, line: 1 })
  let items: Node[] | undefined
  if (isSeq(contents)) {
    items = contents.items as Node[]
    // An empty list key marks a bare list (an included case file), so a writer can keep it bare.
    header[LIST_KEY] = ''
  } else if (isMap(contents)) {
    for (const pair of contents.items) {
      const key = String((pair.key as Node & { value?: unknown })?.toJSON?.() ?? pair.key)
      if (items === undefined && recordKeys.includes(key) && isSeq(pair.value)) {
        items = pair.value.items as Node[]
        header[LIST_KEY] = key
      } else {
        header[key] = toJs(pair.value) as JsonObject[string]
      }
    }
    if (items === undefined) {
      // A mapping with no record list is one record.
      const record = { ...header }
      for (const key of Object.keys(header)) delete header[key]
      yield { value: record, line: 1, index: 0 }
      return
    }
  } else {
    throw new DataError('E_PARSE', 'expected a YAML mapping or list at the top of the document', where(0))
  }
  let index = 0
  for (const item of items) {
    const line = lineCounter.linePos(item.range?.[0] ?? 0).line
    const value = toJs(item)
    yield { value, line, index: index++ }
  }
}

const STRINGIFY_OPTIONS = { lineWidth: 0, minContentWidth: 0, aliasDuplicateObjects: false } as const

/**
 * `value` with every multi-line string whose first non-empty line is only spaces double-quoted: as
 * a block scalar, `yaml` writes it without an indentation indicator and the spaces are lost.
 */
const FRAGILE_BLOCK = /^\n* +(\n|$)/
const KEEP_CHOMPING = /[|>][1-9]?\+/

function quoteFragile(value: unknown): unknown {
  if (typeof value === 'string') {
    if (!FRAGILE_BLOCK.test(value)) return value
    const scalar = new Scalar(value)
    scalar.type = 'QUOTE_DOUBLE'
    return scalar
  }
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined
    for (let i = 0; i < value.length; i++) {
      const fixed = quoteFragile(value[i])
      if (fixed !== value[i]) (copy ??= [...value])[i] = fixed
    }
    return copy ?? value
  }
  let copy: Record<string, unknown> | undefined
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key]
    const fixed = quoteFragile(item)
    if (fixed !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = fixed
  }
  return copy ?? value
}

/** A YAML document: header keys, then `listKey:` and one `- ` item per record. */
export function yamlWriter(sink: Sink, layout: { header?: JsonObject; listKey?: string }): RecordWriter {
  let opened = false
  let lastKeepsTrailing = false
  const indent = layout.listKey ? '  ' : ''
  const open = async () => {
    opened = true
    let head = ''
    const header = { ...layout.header }
    delete header[LIST_KEY]
    if (Object.keys(header).length) head += stringify(header, STRINGIFY_OPTIONS) + '\n'
    if (layout.listKey) head += `${layout.listKey}:\n`
    if (head) await sink.write(head)
  }
  let count = 0
  return {
    async write(record: JsonObject) {
      if (!opened) await open()
      let item = stringify([quoteFragile(record)], STRINGIFY_OPTIONS)
      // Split on \n only: a regex `^` with the m flag also matches after U+2028 and U+2029 inside strings.
      if (indent) item = item.split('\n').map((line) => (line ? indent + line : line)).join('\n')
      // A blank line between items reads well, but after a kept (`|+`) block scalar it would join its text.
      await sink.write((count++ && !lastKeepsTrailing ? '\n' : '') + item)
      lastKeepsTrailing = KEEP_CHOMPING.test(item)
    },
    async end() {
      if (!opened) await open()
      if (count === 0 && layout.listKey) {
        // `key:` alone would read as null; an empty list must stay a list.
        await sink.write(`${indent}[]\n`)
      } else if (count === 0) await sink.write('[]\n')
    },
  }
}
