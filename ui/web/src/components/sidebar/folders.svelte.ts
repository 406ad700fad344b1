// The user's chat folders and, for each open folder, its loaded chats.
// One instance lives in Sidebar; the folder components only render it.

import { api } from '../../lib/api';

export interface Folder {
  id: string;
  parent_id: string | null;
  name: string;
  is_expanded: boolean;
}

export interface FolderChat {
  id: string;
  title: string;
  updated_at: number;
}

export interface FlatFolder {
  folder: Folder;
  depth: number;
}

interface ChatPage {
  rows: FolderChat[];
  pages: number;
  more: boolean;
}

/** GET /api/v1/chats/folder/{id}/list pages by 10 (COMPAT §3.5). */
const PAGE_SIZE = 10;

const enc = encodeURIComponent;
const byName = (a: Folder, b: Folder) => a.name.localeCompare(b.name, undefined, { sensitivity: 'base' });

export class FolderTree {
  list = $state<Folder[]>([]);
  /** false when the server refuses folders (ENABLE_FOLDERS off, or no features.folders permission) */
  enabled = $state(false);
  chats = $state<Record<string, ChatPage>>({});

  children(parent: string | null): Folder[] {
    return this.list.filter((f) => (f.parent_id ?? null) === parent).sort(byName);
  }

  /** Depth-first, as the tree shows them. */
  flat(): FlatFolder[] {
    const out: FlatFolder[] = [];
    const walk = (parent: string | null, depth: number) => {
      for (const folder of this.children(parent)) {
        out.push({ folder, depth });
        walk(folder.id, depth + 1);
      }
    };
    walk(null, 0);
    return out;
  }

  private find(id: string) {
    return this.list.find((f) => f.id === id);
  }

  /** Open and every ancestor open: its chats are on screen. */
  private shown(f: Folder): boolean {
    if (!f.is_expanded) return false;
    const parent = f.parent_id ? this.find(f.parent_id) : undefined;
    return !f.parent_id || (!!parent && this.shown(parent));
  }

  async load() {
    try {
      const rows = await api<Folder[]>('GET', '/api/v1/folders/');
      this.list = Array.isArray(rows) ? rows : [];
      this.enabled = true;
    } catch {
      this.enabled = false;
      this.list = [];
      return;
    }
    await this.reloadOpen();
  }

  /** Reloads (or loads the next page of) one folder's chats. */
  async loadChats(id: string, next = false) {
    const had = this.chats[id];
    const want = next ? (had?.pages ?? 0) + 1 : Math.max(had?.pages ?? 1, 1);
    const from = next ? want : 1; // a reload re-reads every page already shown
    const rows: FolderChat[] = next ? [...(had?.rows ?? [])] : [];
    let last: FolderChat[] = [];
    for (let p = from; p <= want; p++) {
      last = await api<FolderChat[]>('GET', `/api/v1/chats/folder/${enc(id)}/list?page=${p}`);
      const seen = new Set(rows.map((r) => r.id));
      rows.push(...last.filter((r) => !seen.has(r.id)));
      if (last.length < PAGE_SIZE) break;
    }
    this.chats[id] = { rows, pages: want, more: last.length >= PAGE_SIZE };
  }

  /** Reloads the chats of every folder on screen (after moves, archive, delete). */
  async reloadOpen() {
    await Promise.all(this.list.filter((f) => this.shown(f)).map((f) => this.loadChats(f.id).catch(() => {})));
  }

  async setExpanded(id: string, open: boolean) {
    if (!this.flip(id, open)) return;
    if (open) {
      // Opening shows the folder and its open sub-folders: (re)load their
      // chats, which may have changed while they were hidden.
      const under = this.subtree(id);
      const now = this.list.filter((x) => under.has(x.id) && this.shown(x));
      await Promise.all(now.map((x) => this.loadChats(x.id).catch(() => {})));
    }
  }

  /** Sets is_expanded here and on the server; false when it already was. */
  private flip(id: string, open: boolean): boolean {
    const f = this.find(id);
    if (!f || f.is_expanded === open) return false;
    f.is_expanded = open;
    // Only a preference: the tree already shows the new state if saving fails.
    api('POST', `/api/v1/folders/${enc(id)}/update/expanded`, { is_expanded: open }).catch(() => {});
    return true;
  }

  async create(name: string, parent: string | null) {
    const f = await api<Folder>('POST', '/api/v1/folders/', parent ? { name, parent_id: parent } : { name });
    this.list = [...this.list, f];
    if (parent) await this.setExpanded(parent, true);
    return f;
  }

  async rename(id: string, name: string) {
    const f = await api<Folder>('POST', `/api/v1/folders/${enc(id)}/update`, { name });
    this.list = this.list.map((x) => (x.id === id ? { ...x, name: f?.name ?? name } : x));
  }

  /** The ids of a folder and of all folders under it. */
  subtree(id: string): Set<string> {
    const out = new Set([id]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const f of this.list) {
        if (f.parent_id && out.has(f.parent_id) && !out.has(f.id)) {
          out.add(f.id);
          grew = true;
        }
      }
    }
    return out;
  }

  /** Deletes the folder and its sub-folders; their chats go too, or move to the top level. */
  async remove(id: string, withChats: boolean) {
    await api('DELETE', `/api/v1/folders/${enc(id)}?delete_contents=${withChats}`);
    const gone = this.subtree(id);
    this.list = this.list.filter((f) => !gone.has(f.id));
    for (const g of gone) delete this.chats[g];
  }

  /** Moves a chat into a folder (opening it, so the chat is seen to land) or out (null). */
  async moveChat(chatId: string, folderId: string | null) {
    await api('POST', `/api/v1/chats/${enc(chatId)}/folder`, { folder_id: folderId });
    if (folderId) {
      for (let f = this.find(folderId); f; f = f.parent_id ? this.find(f.parent_id) : undefined) this.flip(f.id, true);
    }
    await this.reloadOpen();
  }
}
