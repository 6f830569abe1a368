/**
 * What the watch cache holds: each stored object decoded once, deep-frozen, and shared by every
 * reader (gets, lists, watchers), plus one shared record per change. Frozen objects can be
 * encoded once per wire format and the bytes reused (encode-once.ts), so that each event is
 * encoded once per format however many watchers receive it, as upstream's cachingObject does.
 */
import type { ApiObject, WatchEvent } from '../api';
import { compareGoStrings } from '../../codecs/go-strings';
import { forgetEncodings, viewWithoutTypeMeta } from '../../codecs/encode-once';
import { type Frozen, deepFreeze, isFrozen } from '../../util/frozen';

/**
 * Freeze what of a door's create the watch cache would freeze on adopting it (adoptWritten in
 * resource-cache.ts), except the parts adoption and the write still change: the object itself,
 * its metadata (the resourceVersion, a generated name) and its managedFields (their field sets
 * are pointed at shared copies). Called right after the write's encode walked the object, while
 * it is in the processor's caches: adoption, when the watch event comes, then freezes those
 * few parts and finds the rest frozen, instead of walking the whole object from cold memory.
 *
 * Only for an object the encode found plain (json-order's `plain`): a frozen part is taken as
 * plain JSON without a look inside (isPlainJson with `frozenIsPlain`).
 */
export function freezeForAdoption(obj: ApiObject): void {
  const top = obj as Record<string, unknown>;
  for (const key in top) if (key !== 'metadata') deepFreeze(top[key]);
  const meta = obj.metadata as Record<string, unknown> | undefined;
  if (meta === null || typeof meta !== 'object') return;
  for (const key in meta) if (key !== 'managedFields') deepFreeze(meta[key]);
}

/** A shared set and its JSON text. */
interface SharedSet {
  readonly text: string;
  readonly set: Readonly<Record<string, unknown>>;
}

const MAX_SHARED_FIELD_SETS = 4096;
/** How many of the sets used last a decode looks for in stored text. */
const RECENT_SETS = 4;

const FIELDS_MEMBER = '"fieldsV1":';
/** What a shared set's text is replaced with before parsing: the JSON text of a one-NUL string. */
const PLACEHOLDER_TEXT = '"\\u0000"';
const PLACEHOLDER = '\u0000';

/**
 * The field sets of managedFields (`fieldsV1`) are most of a cached object's heap (one small
 * object per owned field: ~3.5 KB of a 5 KB ReplicaSet) and are the same for every object
 * written the same way by the same manager (a template's pods, a controller's objects). The
 * cache keeps one frozen copy of each distinct set and points every object that has it there
 * (docs/BENCHMARKS.md: 5.1 → 1.7 KB of heap per cached ReplicaSet). Once the table holds
 * MAX_SHARED_FIELD_SETS sets it starts afresh; sets already shared stay with their objects.
 *
 * One table per watch cache, so per server: the library runs many servers in one process, and
 * one server's sets and the order its objects come in are nothing to another's.
 */
export class SharedFieldSets {
  /** Each distinct set, by its JSON text. */
  private sets = new Map<string, Readonly<Record<string, unknown>>>();
  /** The shared sets most recently used, newest first: what a decode looks for in stored text. */
  private readonly recent: SharedSet[] = [];

  /** Point `obj`'s field sets at the shared copies (first freezing and sharing any new one); returns `obj`. */
  share<T extends ApiObject>(obj: T): T {
    const entries: unknown = obj.metadata?.managedFields;
    if (!Array.isArray(entries)) return obj;
    for (const entry of entries as unknown[]) {
      if (entry === null || typeof entry !== 'object') continue;
      const e = entry as { fieldsV1?: unknown };
      const fields = e.fieldsV1;
      // A frozen set is one already shared.
      if (fields === null || typeof fields !== 'object' || isFrozen(fields)) continue;
      // Objects come in key order, so a set is most often the one just seen (the pods of one
      // ReplicaSet sit together): comparing with it costs half of building the table's key.
      const last = this.recent[0];
      if (last && sameJson(fields, last.set)) {
        e.fieldsV1 = last.set;
        continue;
      }
      const key = JSON.stringify(fields);
      let one = this.sets.get(key);
      if (!one) {
        if (this.sets.size >= MAX_SHARED_FIELD_SETS) this.sets = new Map();
        one = deepFreeze(fields as Record<string, unknown>);
        this.sets.set(key, one);
      }
      e.fieldsV1 = one;
      this.noteRecent(key, one);
    }
    return obj;
  }

  /**
   * JSON.parse for stored objects that skips parsing the field sets it already shares: where a
   * `"fieldsV1":` member's value is, character for character, the text of a recently used shared
   * set, the text is parsed with a placeholder there and the entry then points at the shared set.
   * A field set is half of a ReplicaSet's stored bytes, and parsing it only to find it equal to
   * one already held was most of the cost of loading the cache.
   *
   * Safe because a JSON object's text ends where its braces close, so text that starts with a
   * set's text holds exactly that value there; and the placeholder is a string no other value can
   * be (text holding `\u0000` anywhere is parsed as it is), so the parse is used only when every
   * placeholder turns up as a managedFields entry's `fieldsV1`; anything else is parsed again
   * whole. Anything it cannot match is parsed and shared as before by `share`. A property, so
   * that it can be handed over as the decode's parser.
   */
  readonly parse = (text: string): unknown => {
    let at = this.recent.length === 0 ? -1 : text.indexOf(FIELDS_MEMBER);
    if (at < 0 || text.includes('\\u0000')) return JSON.parse(text);
    let replaced = '';
    let from = 0;
    const sets: Readonly<Record<string, unknown>>[] = [];
    while (at >= 0) {
      const value = at + FIELDS_MEMBER.length;
      const hit = this.recent.find((r) => text.startsWith(r.text, value));
      if (hit) {
        replaced += text.slice(from, value) + PLACEHOLDER_TEXT;
        from = value + hit.text.length;
        sets.push(hit.set);
      }
      at = text.indexOf(FIELDS_MEMBER, hit ? from : value);
    }
    if (sets.length === 0) return JSON.parse(text);
    const parsed: unknown = JSON.parse(replaced + text.slice(from));
    return restoreSharedSets(parsed, sets) ? parsed : JSON.parse(text);
  };

  private noteRecent(text: string, set: Readonly<Record<string, unknown>>): void {
    const recent = this.recent;
    if (recent[0]?.set === set) return;
    const at = recent.findIndex((r) => r.set === set);
    if (at > 0) recent.splice(at, 1);
    recent.unshift({ text, set });
    if (recent.length > RECENT_SETS) recent.pop();
  }
}

/** Put `sets` in place of the placeholders, in order; false unless each sits in a managedFields entry. */
function restoreSharedSets(parsed: unknown, sets: readonly Readonly<Record<string, unknown>>[]): boolean {
  if (parsed === null || typeof parsed !== 'object') return false;
  const meta = (parsed as ApiObject).metadata;
  const entries: unknown = meta !== null && typeof meta === 'object' ? meta.managedFields : undefined;
  if (!Array.isArray(entries)) return false;
  let n = 0;
  for (const entry of entries as unknown[]) {
    if (entry === null || typeof entry !== 'object' || (entry as { fieldsV1?: unknown }).fieldsV1 !== PLACEHOLDER) continue;
    if (n === sets.length) return false;
    (entry as { fieldsV1?: unknown }).fieldsV1 = sets[n++];
  }
  return n === sets.length;
}

/** Whether two JSON values would print the same: equal values, and object keys in the same order. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i]!;
    if (k !== kb[i] || !sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

/** One object as of one revision. The derived views are built on first use and shared. */
export class CachedObject {
  private itemView?: ApiObject;
  private addedView?: WatchEvent;
  private fieldView?: Readonly<Record<string, string>>;

  constructor(
    readonly key: string,
    /** The revision this state was written at (its resourceVersion). */
    readonly revision: number,
    /** The full object with apiVersion and kind, shared by every reader. */
    readonly object: Frozen<ApiObject>,
    /** Bytes of its stored value: what the history's memory estimate is made from (EventWindow). */
    readonly storedBytes = 0,
  ) {}

  get labels(): Readonly<Record<string, string>> | undefined {
    return this.object.metadata?.labels;
  }

  /** Items of a typed list carry no apiVersion/kind, as upstream serves them. */
  get listItem(): ApiObject {
    if (!this.itemView) {
      const { apiVersion: _a, kind: _k, ...rest } = this.object;
      this.itemView = Object.freeze(rest);
      viewWithoutTypeMeta(this.itemView, this.object);
    }
    return this.itemView;
  }

  /** The synthetic ADDED event of "Get State" watches, shared by every watcher that starts here. */
  get added(): WatchEvent {
    this.addedView ??= Object.freeze({ type: 'ADDED' as const, object: this.object });
    return this.addedView;
  }

  /** The field-selector view, computed once by the type's `fieldsOf`. */
  fields(fieldsOf: (obj: ApiObject) => Record<string, string>): Readonly<Record<string, string>> {
    this.fieldView ??= Object.freeze(fieldsOf(this.object));
    return this.fieldView;
  }

  /**
   * Let go of the bytes memoised for this state and its views: it is superseded, so gets and
   * lists no longer serve it, and the history keeping it need not keep its encodings too.
   */
  forgetEncodings(): void {
    forgetEncodings(this.object);
    if (this.itemView) forgetEncodings(this.itemView);
    if (this.addedView) forgetEncodings(this.addedView);
  }

  /** The same content at another revision: how a deletion reports the last state (upstream). */
  atRevision(revision: number): CachedObject {
    const object = deepFreeze({ ...this.object, metadata: { ...this.object.metadata, resourceVersion: String(revision) } });
    return new CachedObject(this.key, revision, object, this.storedBytes);
  }
}

export type CacheEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/**
 * What a change held in the history costs beyond its stored bytes: the event and its views,
 * the cached object's own record. A decoded object takes about twice its stored JSON on the
 * heap (docs/BENCHMARKS.md, "Memory under sustained writes").
 */
const EVENT_OVERHEAD_BYTES = 512;
const HEAP_PER_STORED_BYTE = 2;

/**
 * One change, recorded once and shared: the event every unfiltered watcher receives, and the
 * two variants a filtered watcher may need (an object entering or leaving its selection).
 */
export class CacheEvent {
  /** The `{type, object}` every watcher that sees the change unfiltered receives. */
  readonly watchEvent: WatchEvent;
  /** The memory this change holds while in the history, estimated (EventWindow's budget). */
  readonly bytes: number;
  private enteredView?: WatchEvent;
  private leftView?: WatchEvent;

  constructor(
    readonly type: CacheEventType,
    readonly revision: number,
    /** The new state; for DELETED the last state at the deletion's revision. */
    readonly current: CachedObject,
    /** The state before, for MODIFIED and DELETED. */
    readonly previous: CachedObject | undefined,
    /** Clock time when the cache recorded it, for the history window. */
    readonly recordedAt: number,
  ) {
    this.watchEvent = Object.freeze({ type, object: current.object });
    this.bytes = EVENT_OVERHEAD_BYTES + HEAP_PER_STORED_BYTE * current.storedBytes;
  }

  get key(): string {
    return this.current.key;
  }

  /** A change that brought the object into a watcher's selection: ADDED with the new state. */
  get entered(): WatchEvent {
    this.enteredView ??= this.current.added;
    return this.enteredView;
  }

  /** A change that took the object out of a selection: DELETED with the previous content at this revision (upstream). */
  get left(): WatchEvent {
    this.leftView ??= Object.freeze({ type: 'DELETED' as const, object: this.previous!.atRevision(this.revision).object });
    return this.leftView;
  }
}

/**
 * Key order as the backends order keys (memcmp of UTF-8 = code point order, which is Go's string
 * order), so that a chunk cut from the cache continues correctly from the store.
 */
export const compareKeys = compareGoStrings;
