/** Preact with htm (tagged templates instead of JSX: no compile step of its own) and small shared parts. */
import htm from 'htm';
import { createContext, h } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

export const html = htm.bind(h);

/** Moves to `to`; `replace` changes the current history entry instead (a search as it is typed). */
export type Navigate = (to: string, options?: { replace?: boolean }) => void;

/** Who is signed in and what they may do, from `GET /api/admin/user`. */
export interface Session {
  readonly name: string;
  readonly role: 'admin' | 'editor' | 'viewer';
  readonly canEdit: boolean;
}

/** Change notifications of `/api/admin/events/stream`: pages subscribe to reload what they show. */
export interface Live {
  subscribe(listener: (features: readonly string[]) => void): () => void;
}

export const SessionContext = createContext<Session>({ name: '', role: 'viewer', canEdit: false });
export const LiveContext = createContext<Live>({ subscribe: () => () => {} });

/** Reloads via `reload` whenever the server reports a change (debounced a little). */
export function useLiveReload(live: Live, reload: () => void, feature?: string): void {
  const latest = useRef(reload);
  latest.current = reload;
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const unsubscribe = live.subscribe((features) => {
      if (feature !== undefined && features.length > 0 && !features.includes(feature)) return;
      clearTimeout(timer);
      timer = setTimeout(() => latest.current(), 150);
    });
    return () => {
      clearTimeout(timer);
      unsubscribe();
    };
  }, [live, feature]);
}

/** A modal confirmation (native `<dialog>`: focus kept inside, Escape cancels). */
export function ConfirmDialog(props: {
  title: string;
  message: string;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);
  return html`<dialog ref=${ref} class="confirm" aria-labelledby="confirm-title"
      onCancel=${(event: Event) => {
        event.preventDefault();
        props.onCancel();
      }}>
    <h2 id="confirm-title">${props.title}</h2>
    <p>${props.message}</p>
    <div class="actions">
      <button type="button" class="secondary" onClick=${props.onCancel}>Cancel</button>
      <button type="button" class="danger" onClick=${props.onConfirm}>${props.confirmLabel}</button>
    </div>
  </dialog>`;
}

/** An error or notice line, announced to screen readers. */
export function Notice(props: { error?: string | undefined; info?: string | undefined }) {
  if (props.error) return html`<p class="notice error" role="alert">${props.error}</p>`;
  if (props.info) return html`<p class="notice" role="status">${props.info}</p>`;
  return null;
}

export const messageOf = (error: unknown) =>
  error instanceof Error ? error.message : String(error);

/** A switch (checkbox with the switch role) for a flag in one environment. */
export function Switch(props: {
  checked: boolean;
  label: string;
  disabled?: boolean;
  onChange: (checked: boolean) => void;
}) {
  return html`<label class="switch" title=${props.label}>
    <input type="checkbox" role="switch" checked=${props.checked} disabled=${props.disabled}
      aria-label=${props.label}
      onChange=${(event: Event) => {
        const input = event.currentTarget as HTMLInputElement;
        const wanted = input.checked;
        // The page shows the server's state: the switch moves once the server says so.
        input.checked = props.checked;
        props.onChange(wanted);
      }} />
    <span aria-hidden="true"></span>
  </label>`;
}

export const formatTime = (iso: string | null | undefined) =>
  iso ? new Date(iso).toLocaleString() : '';
