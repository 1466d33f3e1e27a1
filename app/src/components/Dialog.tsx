import { useEffect, useId, useRef, type ReactNode } from 'react';

/**
 * A modal dialog on the native <dialog> element: showModal() makes the rest of the page inert
 * (focus stays inside), Escape closes it, and focus returns where it was.
 */
export function Dialog({ title, onClose, children, dismissable = true }: { title: string; onClose: () => void; children: ReactNode; dismissable?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current!;
    const before = document.activeElement as HTMLElement | null;
    if (!dialog.open) dialog.showModal();
    return () => {
      dialog.close();
      before?.focus?.();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        if (dismissable) onClose();
      }}
    >
      <h2 id={titleId}>{title}</h2>
      {children}
    </dialog>
  );
}

/** A question before an action that cannot be taken back: Cancel, or the action itself (then closed). */
export function ConfirmDialog({ title, children, confirm, danger = false, onConfirm, onClose }: { title: string; children: ReactNode; confirm: string; danger?: boolean; onConfirm: () => void; onClose: () => void }) {
  return (
    <Dialog title={title} onClose={onClose}>
      {children}
      <div className="actions">
        <button type="button" onClick={onClose}>
          Cancel
        </button>
        <button
          type="button"
          className={danger ? 'danger' : 'primary'}
          onClick={() => {
            onClose();
            onConfirm();
          }}
        >
          {confirm}
        </button>
      </div>
    </Dialog>
  );
}

/** The buttons at the foot of a dialog's form: leave it, or submit it (disabled while `busy`). */
export function FormActions({ submit, busy = false, cancel = 'Cancel', onCancel }: { submit: string; busy?: boolean; cancel?: string; onCancel: () => void }) {
  return (
    <div className="actions">
      <button type="button" onClick={onCancel}>
        {cancel}
      </button>
      <button type="submit" className="primary" disabled={busy}>
        {submit}
      </button>
    </div>
  );
}
