// The chat message tree (COMPAT.md §3.2): history.messages maps id → message,
// linked by parentId / childrenIds; history.currentId is the leaf of the
// visible thread. Pure functions: they never mutate their input.

export interface Message {
  id: string;
  parentId: string | null;
  childrenIds: string[];
  role: 'user' | 'assistant' | 'system' | string;
  content: string;
  timestamp: number; // seconds
  done?: boolean;
  model?: string;
  models?: string[];
  error?: { content?: string } | null;
  [key: string]: unknown;
}

export interface History {
  currentId: string | null;
  messages: Record<string, Message>;
}

export function emptyHistory(): History {
  return { currentId: null, messages: {} };
}

/** The visible thread: from the root down to currentId (following parentId up). */
export function thread(h: History, leaf: string | null = h.currentId): Message[] {
  const out: Message[] = [];
  const seen = new Set<string>();
  let id = leaf;
  while (id && h.messages[id] && !seen.has(id)) {
    seen.add(id);
    out.push(h.messages[id]);
    id = h.messages[id].parentId;
  }
  return out.reverse();
}

/** Ids of a message and its siblings, in order (roots: messages without a parent). */
export function siblings(h: History, id: string): string[] {
  const m = h.messages[id];
  if (!m) return [];
  if (m.parentId && h.messages[m.parentId]) return h.messages[m.parentId].childrenIds;
  return Object.values(h.messages)
    .filter((x) => !x.parentId || !h.messages[x.parentId])
    .map((x) => x.id);
}

/** The leaf reached from id by following the last child each time. */
export function leafOf(h: History, id: string): string {
  const seen = new Set<string>();
  let cur = id;
  while (!seen.has(cur)) {
    seen.add(cur);
    const kids = h.messages[cur]?.childrenIds ?? [];
    const next = kids[kids.length - 1];
    if (!next || !h.messages[next]) break;
    cur = next;
  }
  return cur;
}

/** Show the sibling `offset` steps away from id (−1 previous, +1 next); returns the new history. */
export function switchSibling(h: History, id: string, offset: number): History {
  const sibs = siblings(h, id);
  const i = sibs.indexOf(id);
  const j = i + offset;
  if (i < 0 || j < 0 || j >= sibs.length) return h;
  return { ...h, currentId: leafOf(h, sibs[j]) };
}

export interface TurnInput {
  userId: string;
  assistantId: string;
  content: string;
  model: string;
  /** parent of the new user message; defaults to currentId */
  parentId?: string | null;
  now?: number; // seconds
}

export interface TurnResult {
  history: History;
  /** exactly the messages to send in an update: the new user and assistant messages and the changed parent */
  changed: Record<string, Message>;
}

/**
 * Adds a user message and an empty assistant placeholder under parentId
 * (SPEC.md §4 orchestration flow); currentId moves to the placeholder.
 */
export function addTurn(h: History, t: TurnInput): TurnResult {
  const now = t.now ?? Math.floor(Date.now() / 1000);
  const parentId = t.parentId === undefined ? h.currentId : t.parentId;
  const parent = parentId ? h.messages[parentId] : undefined;
  const user: Message = {
    id: t.userId,
    parentId: parent ? parent.id : null,
    childrenIds: [t.assistantId],
    role: 'user',
    content: t.content,
    timestamp: now,
    models: [t.model],
  };
  const assistant: Message = {
    id: t.assistantId,
    parentId: t.userId,
    childrenIds: [],
    role: 'assistant',
    content: '',
    timestamp: now,
    model: t.model,
    modelIdx: 0,
    done: false,
  };
  const changed: Record<string, Message> = { [user.id]: user, [assistant.id]: assistant };
  if (parent) {
    changed[parent.id] = { ...parent, childrenIds: [...parent.childrenIds, user.id] };
  }
  return {
    history: { currentId: assistant.id, messages: { ...h.messages, ...changed } },
    changed,
  };
}

/**
 * Adds a new assistant placeholder as a sibling of assistantId (regenerate):
 * same parent user message; currentId moves to it.
 */
export function addRegeneration(
  h: History,
  assistantId: string,
  newId: string,
  model: string,
  now = Math.floor(Date.now() / 1000),
): TurnResult {
  const old = h.messages[assistantId];
  const parent = old?.parentId ? h.messages[old.parentId] : undefined;
  if (!old || !parent) return { history: h, changed: {} };
  const msg: Message = {
    id: newId, parentId: parent.id, childrenIds: [], role: 'assistant', content: '',
    timestamp: now, model, modelIdx: 0, done: false,
  };
  const changed = { [newId]: msg, [parent.id]: { ...parent, childrenIds: [...parent.childrenIds, newId] } };
  return { history: { currentId: newId, messages: { ...h.messages, ...changed } }, changed };
}

/** Replace fields of one message (returns a new history). */
export function patchMessage(h: History, id: string, patch: Partial<Message>): History {
  const m = h.messages[id];
  if (!m) return h;
  return { ...h, messages: { ...h.messages, [id]: { ...m, ...patch } } };
}

/** The completion request's messages: the thread up to (not including) the assistant placeholder. */
export function promptMessages(h: History, assistantId: string): { role: string; content: string }[] {
  const t = thread(h, assistantId);
  return t
    .filter((m) => m.id !== assistantId && m.role !== undefined)
    .map((m) => ({ role: m.role, content: m.content }));
}

/** The legacy flat messages[] list stored next to history: the visible thread. */
export function flatMessages(h: History): Message[] {
  return thread(h);
}
