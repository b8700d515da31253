import { useState } from 'react';
import type { Schemas } from '../api/client.js';

type IssuedCredential = Schemas['IssuedCredential'];

/**
 * New secrets, shown once: the gateway keeps only their hashes. They live in this
 * component's state alone (never in storage, never in the address) and are gone when the
 * admin dismisses the panel or leaves the page.
 */
export function SecretPanel(props: {
  credentials: readonly IssuedCredential[];
  pairLabel?: (redirectPairId: string | null) => string;
  onDismiss: () => void;
}) {
  if (props.credentials.length === 0) return null;
  return (
    <section className="secret-panel" aria-labelledby="secret-panel-title">
      <h2 id="secret-panel-title">Copy the new secret now</h2>
      <p className="warning">
        <strong>You will not see this secret again.</strong> The gateway stores only its hash; give
        it to the platform's backend now. If it is lost, rotate the key.
      </p>
      {props.credentials.map((credential) => (
        <dl key={credential.id} className="secret">
          <dt>Key</dt>
          <dd>
            {credential.kind === 'bff' ? 'BFF key' : 'Backend key'}
            {props.pairLabel === undefined || credential.kind !== 'bff'
              ? ''
              : ` for ${props.pairLabel(credential.redirectPairId)}`}
          </dd>
          <dt>Client id</dt>
          <dd>
            <code data-testid="issued-client-id">{credential.clientId}</code>{' '}
            <CopyButton text={credential.clientId} what="client id" />
          </dd>
          <dt>Client secret</dt>
          <dd>
            <code data-testid="issued-client-secret">{credential.clientSecret}</code>{' '}
            <CopyButton text={credential.clientSecret} what="client secret" />
          </dd>
        </dl>
      ))}
      <button type="button" className="primary" onClick={props.onDismiss}>
        I have stored the secret
      </button>
    </section>
  );
}

function CopyButton({ text, what }: { text: string; what: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <>
      <button type="button" className="small" onClick={() => void copy()}>
        Copy {what}
      </button>
      <span role="status" className="copy-state">
        {state === 'copied' ? 'Copied.' : state === 'failed' ? 'Select and copy it by hand.' : ''}
      </span>
    </>
  );
}
