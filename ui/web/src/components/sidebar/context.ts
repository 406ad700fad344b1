import { getContext, setContext } from 'svelte';
import type { FlatFolder } from './folders.svelte';

/** A chat as the sidebar lists it (main list, pinned, folders, search, tag filter). */
export interface RowChat {
  id: string;
  title: string;
}

/** A tag (TagModel); id is the normalized name. */
export interface Tag {
  id: string;
  name: string;
}

/**
 * What a chat row can do, provided once by Sidebar so rows nested in folders
 * need no prop chains. Getters stay reactive when read in markup.
 */
export interface RowActions {
  readonly current: string | null;
  /** every folder, depth-first, for "Move to folder…" */
  readonly folders: FlatFolder[];
  isPinned(id: string): boolean;
  select(id: string): void;
  rename(id: string, title: string): Promise<void>;
  pin(id: string): Promise<void>;
  archive(id: string): Promise<void>;
  remove(chat: RowChat): Promise<void>;
  /** folderId null takes the chat out of its folder */
  move(id: string, folderId: string | null): Promise<void>;
  editTags(chat: RowChat): void;
}

const KEY = Symbol('sidebar-row-actions');
export const setRowActions = (a: RowActions) => setContext(KEY, a);
export const rowActions = () => getContext<RowActions>(KEY);
