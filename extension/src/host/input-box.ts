// SillyTavern's chat input (#send_textarea): "Put in the input box" puts a
// prompt's text there for the user to read, edit and send. Text already
// typed is kept: the prompt goes after it, a blank line between. The input
// event tells SillyTavern (its autosize and draft keeping) as typing does.

export const INPUT_BOX_ID = 'send_textarea';

/** Puts text into the chat input; false when the page has none. */
export function putInInputBox(text: string, doc: Document = document): boolean {
  const box = doc.getElementById(INPUT_BOX_ID);
  if (!(box instanceof HTMLTextAreaElement) && !(box instanceof HTMLInputElement)) return false;
  const before = box.value.replace(/\s+$/, '');
  box.value = before === '' ? text : `${before}\n\n${text}`;
  box.dispatchEvent(new Event('input', { bubbles: true }));
  box.focus();
  return true;
}
