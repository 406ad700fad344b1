// Dropping files anywhere on the chat attaches them. A Svelte attachment
// ({@attach dropFiles(...)}): `over` reports whether files are being
// dragged over the element, to show where they would go.

/** Whether a drag carries files (not text or a link being dragged). */
const hasFiles = (e: DragEvent) => !!e.dataTransfer && [...e.dataTransfer.types].includes('Files');

export function dropFiles(onfiles: (files: File[]) => void, over: (on: boolean) => void) {
  return (el: HTMLElement) => {
    // dragenter/dragleave fire for every child crossed: count them.
    let depth = 0;
    const enter = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      if (depth++ === 0) over(true);
    };
    const leave = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      if (--depth <= 0) {
        depth = 0;
        over(false);
      }
    };
    const dragover = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault(); // allows the drop
      e.dataTransfer!.dropEffect = 'copy';
    };
    const drop = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      depth = 0;
      over(false);
      const files = [...(e.dataTransfer?.files ?? [])];
      if (files.length) onfiles(files);
    };
    el.addEventListener('dragenter', enter);
    el.addEventListener('dragleave', leave);
    el.addEventListener('dragover', dragover);
    el.addEventListener('drop', drop);
    return () => {
      el.removeEventListener('dragenter', enter);
      el.removeEventListener('dragleave', leave);
      el.removeEventListener('dragover', dragover);
      el.removeEventListener('drop', drop);
    };
  };
}
