// The composer's attachments: files being uploaded and processed, and
// knowledge collections, until the message that carries them is sent.
import { uuid } from '../../lib/api';
import {
  collectionItem, deleteFile, isBusy, uploadFile, waitProcessed, type Collection, type FileItem,
} from '../../lib/files';

export class Attachments {
  items = $state<FileItem[]>([]);
  /** an upload or processing is still running: sending waits for it */
  busy = $derived(this.items.some(isBusy));
  /** what a message would carry now (failed files stay behind) */
  ready = $derived(this.items.filter((f) => !isBusy(f) && f.status !== 'failed'));

  // Uploads that a removal or a reset must stop, by itemId.
  #aborts = new Map<string, AbortController>();
  // Items uploaded here and not sent yet: removing one deletes the file
  // (a file brought back from a sent message stays, the message needs it).
  #own = new Set<string>();

  /** Starts uploading each file; its chip follows the progress. */
  add(files: Iterable<File>) {
    for (const file of files) this.#upload(file);
  }

  attachCollection(k: Collection) {
    if (this.items.some((f) => f.type === 'collection' && f.id === k.id)) return;
    this.items.push(collectionItem(k));
  }

  /** Drops an attachment; an upload not sent with a message is deleted on the server. */
  remove(itemId: string) {
    const f = this.items.find((x) => x.itemId === itemId);
    if (!f) return;
    this.#aborts.get(itemId)?.abort();
    this.#aborts.delete(itemId);
    this.items = this.items.filter((x) => x.itemId !== itemId);
    if (this.#own.delete(itemId) && f.id) deleteFile(f.id);
  }

  /** Replaces the list (editing a message brings back its files). */
  set(items: FileItem[]) {
    this.clear();
    this.items = items.map((f) => ({ ...f, itemId: f.itemId ?? uuid() }));
  }

  /** Removes every attachment (the draft was abandoned). */
  clear() {
    for (const f of [...this.items]) if (f.itemId) this.remove(f.itemId);
    this.items = [];
  }

  /** Forgets the list after sending: the files now belong to the message. */
  sent() {
    this.#own.clear();
    this.items = [];
  }

  /** Plain copies of the ready items, for a message and its request. */
  take(): FileItem[] {
    return $state.snapshot(this.ready) as FileItem[];
  }

  #patch(itemId: string, patch: Partial<FileItem>) {
    const i = this.items.findIndex((x) => x.itemId === itemId);
    if (i >= 0) this.items[i] = { ...this.items[i], ...patch };
  }

  async #upload(file: File) {
    const itemId = uuid();
    // Open WebUI's item shape, filled in as the upload answers.
    this.items.push({
      type: 'file', file: '', id: null, url: '', name: file.name, collection_name: '',
      status: 'uploading', size: file.size, error: '', itemId,
    });
    const ctl = new AbortController();
    this.#aborts.set(itemId, ctl);
    this.#own.add(itemId);
    try {
      const rec = await uploadFile(file, ctl.signal);
      if (ctl.signal.aborted) {
        deleteFile(rec.id); // removed while the answer was on its way
        return;
      }
      this.#patch(itemId, {
        status: 'processing', file: rec, id: rec.id, url: `/api/v1/files/${rec.id}`,
        collection_name: rec.meta?.collection_name ?? '',
      });
      const done = await waitProcessed(rec.id, ctl.signal);
      this.#patch(itemId, done.status === 'failed' ? { status: 'failed', error: done.error } : { status: 'uploaded' });
    } catch (e) {
      if (ctl.signal.aborted) return; // removed: nothing to show
      this.#patch(itemId, { status: 'failed', error: (e as Error).message || 'Upload failed.' });
    } finally {
      if (this.#aborts.get(itemId) === ctl) this.#aborts.delete(itemId);
    }
  }
}
