import { useId, useState, type FormEvent } from 'react';
import { api, errorText } from '../api/client.ts';
import { Dialog, FormActions } from './Dialog.tsx';

type Extent = 'page' | 'below' | 'all';

/**
 * "Export PDF" for a page: the page alone, the page and the pages inside it, or every page (of the
 * space, or of the change request's version of it). The server prints (getSpacePDF,
 * getChangeRequestPDF) and answers a link that works for an hour; a big export is printed in the
 * background, and its link says how far printing is until the PDF is there.
 */
export function ExportPdf({ contentPath, pageId, pageTitle }: { contentPath: string; pageId: string; pageTitle: string }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Export PDF
      </button>
      {open && <ExportPdfDialog contentPath={contentPath} pageId={pageId} pageTitle={pageTitle} onClose={() => setOpen(false)} />}
    </>
  );
}

function ExportPdfDialog({ contentPath, pageId, pageTitle, onClose }: { contentPath: string; pageId: string; pageTitle: string; onClose: () => void }) {
  const id = useId();
  const [extent, setExtent] = useState<Extent>('page');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [url, setUrl] = useState<string>();

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setUrl(undefined);
    try {
      const query = extent === 'all' ? {} : { page: pageId, ...(extent === 'page' ? { only: true } : {}) };
      setUrl((await api.get<{ url: string }>(`${contentPath}/pdf`, query)).url);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }

  const choices: Array<[Extent, string]> = [
    ['page', `Only “${pageTitle}”`],
    ['below', `“${pageTitle}” and the pages inside it`],
    ['all', 'Every page'],
  ];
  return (
    <Dialog title="Export as PDF" onClose={onClose}>
      <form className="form" onSubmit={submit}>
        <fieldset className="choices">
          <legend>What to export</legend>
          {choices.map(([value, label]) => (
            <label key={value} htmlFor={`${id}-${value}`} className="choice">
              <input id={`${id}-${value}`} type="radio" name={`${id}-extent`} checked={extent === value} onChange={() => setExtent(value)} /> {label}
            </label>
          ))}
        </fieldset>
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        {url && (
          <p role="status" className="ok">
            Ready:{' '}
            <a href={url} target="_blank" rel="noopener">
              Download the PDF
            </a>{' '}
            (the link works for an hour).
          </p>
        )}
        <FormActions submit={busy ? 'Creating…' : 'Create PDF'} busy={busy} cancel="Close" onCancel={onClose} />
      </form>
    </Dialog>
  );
}
