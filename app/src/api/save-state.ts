/** How much of what a person typed the server has: the words of the editor's status line. */
export type SaveState = 'saved' | 'unsaved' | 'saving' | 'signed-out' | 'error';

export function saveStateText(state: SaveState, error?: string): string {
  switch (state) {
    case 'saved':
      return 'All changes saved';
    case 'unsaved':
      return 'Unsaved changes';
    case 'saving':
      return 'Saving…';
    case 'signed-out':
      return 'Not saved: sign in again to save';
    case 'error':
      return `Not saved: ${error ?? 'error'}`;
  }
}
