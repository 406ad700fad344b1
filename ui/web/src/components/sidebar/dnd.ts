// HTML5 drag and drop of chat rows onto folders (and back onto "Chats").
// The chat id travels in the DataTransfer under our own type, so a drop of
// text or files from elsewhere is never taken for a chat.

export const CHAT_MIME = 'application/x-hearth-chat';

export function startChatDrag(e: DragEvent, id: string, title: string) {
  if (!e.dataTransfer) return;
  e.dataTransfer.setData(CHAT_MIME, id);
  e.dataTransfer.setData('text/plain', title || 'New Chat'); // Firefox only starts a drag with some data
  e.dataTransfer.effectAllowed = 'move';
}

// During dragover only the types are readable (the data is protected).
const carriesChat = (e: DragEvent) => !!e.dataTransfer && [...e.dataTransfer.types].includes(CHAT_MIME);

/**
 * Makes an element a drop target for chat rows: while a chat hovers it the
 * element has the class `drop-over`; a drop calls ondrop with the chat id.
 */
export function chatDrop(node: HTMLElement, ondrop: (chatId: string) => void) {
  let handler = ondrop;
  let depth = 0; // dragenter/leave also fire for children: count, not toggle
  const set = (on: boolean) => node.classList.toggle('drop-over', on);
  const enter = (e: DragEvent) => {
    if (!carriesChat(e)) return;
    depth += 1;
    set(true);
  };
  const leave = (e: DragEvent) => {
    if (!carriesChat(e)) return;
    depth = Math.max(0, depth - 1);
    if (!depth) set(false);
  };
  const over = (e: DragEvent) => {
    if (!carriesChat(e)) return;
    e.preventDefault(); // allows the drop
    e.dataTransfer!.dropEffect = 'move';
  };
  const drop = (e: DragEvent) => {
    depth = 0;
    set(false);
    const id = e.dataTransfer?.getData(CHAT_MIME);
    if (!id) return;
    e.preventDefault();
    handler(id);
  };
  node.addEventListener('dragenter', enter);
  node.addEventListener('dragleave', leave);
  node.addEventListener('dragover', over);
  node.addEventListener('drop', drop);
  return {
    update(next: (chatId: string) => void) {
      handler = next;
    },
    destroy() {
      node.removeEventListener('dragenter', enter);
      node.removeEventListener('dragleave', leave);
      node.removeEventListener('dragover', over);
      node.removeEventListener('drop', drop);
    },
  };
}
