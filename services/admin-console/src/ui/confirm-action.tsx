import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { ProblemAlert } from './alerts.js';

type ConfirmActionProps = {
  /** The button that opens the dialog: short, the same in every row of a table. */
  label: string;
  /**
   * The button's full name with its target (`Rotate gwc_…`), for screen readers (aria-label)
   * and on hover (title), when the short label alone does not say what it acts on.
   */
  accessibleName?: string;
  title: string;
  /** What the action does, spelled out before the click. */
  consequences: readonly ReactNode[];
  confirmLabel: string;
  danger?: boolean;
  /** Extra inputs inside the dialog (options of the action). */
  children?: ReactNode;
  onConfirm: () => Promise<void>;
  buttonClass?: string;
};

/**
 * A button whose action runs only after a dialog (the native modal `<dialog>`: focus is
 * trapped and Escape closes it) has said what will happen. An error stays in the dialog.
 */
export function ConfirmAction(props: ConfirmActionProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<unknown>();
  useEffect(() => {
    const element = dialog.current;
    if (element === null) return;
    if (open && !element.open) element.showModal();
    if (!open && element.open) element.close();
  }, [open]);
  const confirm = async () => {
    setBusy(true);
    setProblem(undefined);
    try {
      await props.onConfirm();
      setOpen(false);
    } catch (error) {
      setProblem(error);
    } finally {
      setBusy(false);
    }
  };
  const danger = props.danger === true ? ' danger' : '';
  return (
    <>
      <button
        type="button"
        className={props.buttonClass ?? `secondary${danger}`}
        aria-label={props.accessibleName}
        title={props.accessibleName}
        onClick={() => setOpen(true)}
      >
        {props.label}
      </button>
      <dialog ref={dialog} aria-labelledby={titleId} onClose={() => setOpen(false)}>
        {open ? (
          <div className="dialog-body">
            <h2 id={titleId}>{props.title}</h2>
            <ul className="consequences">
              {props.consequences.map((line, index) => (
                <li key={index}>{line}</li>
              ))}
            </ul>
            {props.children}
            <ProblemAlert problem={problem} />
            <div className="actions">
              <button
                type="button"
                className={`primary${danger}`}
                disabled={busy}
                onClick={() => void confirm()}
              >
                {busy ? 'Working…' : props.confirmLabel}
              </button>
              <button type="button" className="secondary" onClick={() => setOpen(false)}>
                Cancel
              </button>
            </div>
          </div>
        ) : null}
      </dialog>
    </>
  );
}
