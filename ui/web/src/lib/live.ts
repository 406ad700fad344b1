// The live connection (GET /ws, realtime/doc.go): one JSON object per text
// frame. Authenticates with the in-memory token when there is one (else the
// same-origin `token` cookie), applies the per-message sequence rule and
// resumes after gaps and reconnects.

export interface LiveEvent {
  chat_id: string;
  message_id: string;
  type: string;
  data: any;
}

type Frame = {
  type: string;
  seq?: number;
  chat_id?: string;
  message_id?: string;
  data?: { type: string; data: any };
  since?: number;
  found?: boolean;
  done?: boolean;
  events?: Frame[];
};

/** Per-message sequencing (client rule of realtime/doc.go); pure, testable. */
export class Sequencer {
  applied = new Map<string, number>();
  pending = new Set<string>();

  key(chat: string, msg: string) {
    return `${chat}\u0000${msg}`;
  }

  /** A live events frame: 'apply', 'ignore', or 'resume' (send resume {since}). */
  live(f: Frame): { action: 'apply' | 'ignore' | 'resume'; since?: number } {
    if (f.seq === undefined || !f.chat_id || !f.message_id) return { action: 'apply' };
    const k = this.key(f.chat_id, f.message_id);
    const a = this.applied.get(k) ?? 0;
    if (f.seq <= a) return { action: 'ignore' };
    if (f.seq === a + 1) {
      this.applied.set(k, f.seq);
      return { action: 'apply' };
    }
    if (this.pending.has(k)) return { action: 'ignore' };
    this.pending.add(k);
    return { action: 'resume', since: a };
  }

  /** A resumed frame: the events to apply, in order; reload=true when found is false. */
  resumed(f: Frame): { apply: Frame[]; reload: boolean } {
    const k = this.key(f.chat_id!, f.message_id!);
    this.pending.delete(k);
    let a = this.applied.get(k) ?? 0;
    if (!f.found) {
      this.applied.set(k, f.seq ?? 0);
      return { apply: [], reload: true };
    }
    if ((f.since ?? 0) < a) a = f.since ?? 0;
    const out: Frame[] = [];
    for (const e of f.events ?? []) {
      if ((e.seq ?? 0) > a) {
        out.push(e);
        a = e.seq ?? a;
      }
    }
    this.applied.set(k, Math.max(a, f.seq ?? 0));
    return { apply: out, reload: false };
  }

  /** Start tracking a message we began generating now (its first event is seq 1). */
  track(chat: string, msg: string) {
    const k = this.key(chat, msg);
    if (!this.applied.has(k)) this.applied.set(k, 0);
  }
}

export class Live {
  private ws: WebSocket | null = null;
  private seq = new Sequencer();
  private timer: ReturnType<typeof setInterval> | null = null;
  private closed = false;
  private retry = 0;
  /** messages generating, resumed after a reconnect */
  active = new Set<string>();

  constructor(
    private getToken: () => string | null,
    private onEvent: (e: LiveEvent) => void,
    private onReload: (chatId: string, messageId: string) => void,
  ) {}

  connect() {
    this.closed = false;
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${proto}//${location.host}/ws`);
    this.ws = ws;
    ws.onopen = () => {
      const t = this.getToken();
      if (t) ws.send(JSON.stringify({ type: 'auth', token: t }));
    };
    ws.onmessage = (m) => {
      if (typeof m.data !== 'string') return;
      let f: Frame;
      try {
        f = JSON.parse(m.data);
      } catch {
        return;
      }
      this.frame(f);
    };
    ws.onclose = (ev) => {
      if (this.timer) clearInterval(this.timer);
      this.timer = null;
      this.ws = null;
      if (this.closed || ev.code === 4001 || ev.code === 4003) return;
      const delay = Math.min(10000, 500 * 2 ** this.retry++);
      setTimeout(() => !this.closed && this.connect(), delay);
    };
  }

  close() {
    this.closed = true;
    this.ws?.close();
  }

  track(chatId: string, messageId: string) {
    this.seq.track(chatId, messageId);
    this.active.add(`${chatId}\u0000${messageId}`);
  }

  /** Ask for everything after what we have applied (e.g. after opening a generating chat). */
  resume(chatId: string, messageId: string) {
    this.active.add(`${chatId}\u0000${messageId}`);
    const since = this.seq.applied.get(this.seq.key(chatId, messageId)) ?? 0;
    this.send({ type: 'resume', chat_id: chatId, message_id: messageId, since });
  }

  private send(o: unknown) {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(o));
  }

  private emit(f: Frame) {
    if (!f.data || !f.chat_id) return;
    const e = { chat_id: f.chat_id, message_id: f.message_id ?? '', type: f.data.type, data: f.data.data };
    if (isEnd(e)) this.active.delete(`${e.chat_id}\u0000${e.message_id}`);
    this.onEvent(e);
  }

  private frame(f: Frame) {
    switch (f.type) {
      case 'ready':
        this.retry = 0;
        if (this.timer) clearInterval(this.timer);
        this.timer = setInterval(() => this.send({ type: 'heartbeat' }), 30000);
        for (const k of this.active) {
          const [c, m] = k.split('\u0000');
          this.resume(c, m);
        }
        break;
      case 'events': {
        const r = this.seq.live(f);
        if (r.action === 'apply') this.emit(f);
        else if (r.action === 'resume')
          this.send({ type: 'resume', chat_id: f.chat_id, message_id: f.message_id, since: r.since });
        break;
      }
      case 'resumed': {
        const r = this.seq.resumed(f);
        if (r.reload) this.onReload(f.chat_id!, f.message_id!);
        for (const e of r.apply) this.emit(e);
        break;
      }
    }
  }
}

export function isEnd(e: { type: string; data: any }): boolean {
  return (
    (e.type === 'chat:completion' && e.data?.done === true) ||
    e.type === 'chat:tasks:cancel' ||
    e.type === 'chat:message:error' ||
    (e.type === 'chat:active' && e.data?.active === false)
  );
}
