// An answer's sources (COMPAT.md §8.8): each source object holds the
// request item it came from and parallel lists of chunk texts and chunk
// metadata. As Open WebUI's client shows them, chunks are grouped by the
// document they came from (metadata.source, else the item's id) and the
// groups numbered in order — the numbers the prompt's <source id="N"> tags
// and the answer's [N] citations use.

export interface SourceGroup {
  id: string;
  name: string;
  /** a web page the source came from (http and https only) */
  url?: string;
  snippets: string[];
}

const isWeb = (s: string) => /^https?:\/\//i.test(s);
const str = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

export function groupSources(sources: unknown): SourceGroup[] {
  if (!Array.isArray(sources)) return [];
  const out: SourceGroup[] = [];
  for (const s of sources) {
    if (!s || typeof s !== 'object') continue;
    const item = ((s as any).source ?? {}) as Record<string, unknown>;
    const docs: unknown[] = Array.isArray((s as any).document) ? (s as any).document : [];
    const metas: any[] = Array.isArray((s as any).metadata) ? (s as any).metadata : [];
    docs.forEach((doc, i) => {
      const meta = metas[i] && typeof metas[i] === 'object' ? metas[i] : {};
      const id = str(meta.source) || str(item.id) || 'N/A';
      let g = out.find((x) => x.id === id);
      if (!g) {
        const name = str(meta.name) || str(item.name) || id;
        const url = isWeb(id) ? id : isWeb(str(item.url)) ? str(item.url) : undefined;
        g = { id, name, url, snippets: [] };
        out.push(g);
      }
      const text = str(doc);
      if (text) g.snippets.push(text);
    });
  }
  return out;
}
