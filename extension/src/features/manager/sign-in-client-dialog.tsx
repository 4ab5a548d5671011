// Asks for a client the user registered by hand, when a server's
// authorization server offers no dynamic registration
// (mcp.auth_client_required): its client ID and, for a confidential
// client, its secret, with the redirect URI to register it for.

import { useId, useState } from 'react';
import type { TauriTavernMcpServer } from '../../../../jsapi/tauritavern-mcp';
import { RESULT, showDialog } from '../../host/popup';
import type { Tr } from '../../base/texts';
import { useTr } from '../../base/tr';

export interface SignInClient {
  clientId: string;
  clientSecret?: string;
}

interface Draft {
  clientId: string;
  clientSecret: string;
}

function ClientForm(props: { server: TauriTavernMcpServer; reason: string; draft: Draft }) {
  const tr = useTr();
  const id = useId();
  const [clientId, setClientId] = useState(props.draft.clientId);
  const [clientSecret, setClientSecret] = useState(props.draft.clientSecret);
  const redirect = props.server.auth?.redirectUri;
  return (
    <div className="tt-mcp-client-form">
      <h3>{tr('client_title')}</h3>
      <code className="tt-mcp-endpoint">{props.server.endpoint}</code>
      <p className="tt-mcp-note">{tr('client_body')}</p>
      <p className="tt-mcp-note">{props.reason}</p>
      {redirect !== undefined && (
        <label className="tt-mcp-field">
          <span>{tr('redirect_uri')}</span>
          <input className="text_pole" readOnly value={redirect} onFocus={(e) => e.currentTarget.select()} />
        </label>
      )}
      <label className="tt-mcp-field" htmlFor={`${id}-client-id`}>
        <span>{tr('client_id')}</span>
      </label>
      <input
        id={`${id}-client-id`}
        className="text_pole"
        data-autofocus
        required
        autoComplete="off"
        placeholder={tr('client_id_required')}
        value={clientId}
        onChange={(e) => {
          setClientId(e.target.value);
          props.draft.clientId = e.target.value;
        }}
      />
      <label className="tt-mcp-field" htmlFor={`${id}-client-secret`}>
        <span>{tr('client_secret')}</span>
      </label>
      <input
        id={`${id}-client-secret`}
        className="text_pole"
        type="password"
        autoComplete="off"
        value={clientSecret}
        onChange={(e) => {
          setClientSecret(e.target.value);
          props.draft.clientSecret = e.target.value;
        }}
      />
    </div>
  );
}

/**
 * Asks for the client to sign in to server with; null when cancelled.
 * reason is the backend's message saying why it is needed.
 */
export async function askSignInClient(server: TauriTavernMcpServer, reason: string, tr: Tr): Promise<SignInClient | null> {
  const draft: Draft = { clientId: '', clientSecret: '' };
  const result = await showDialog(
    <ClientForm server={server} reason={reason} draft={draft} />,
    {
      kind: 'confirm',
      okButton: tr('sign_in'),
      cancelButton: tr('cancel'),
      // Sign in stays disabled in effect: without a client ID the dialog stays open.
      onClosing: (r) => r !== RESULT.AFFIRMATIVE || draft.clientId.trim() !== '',
    },
    tr,
  );
  if (result !== RESULT.AFFIRMATIVE || draft.clientId.trim() === '') return null;
  const client: SignInClient = { clientId: draft.clientId.trim() };
  if (draft.clientSecret !== '') client.clientSecret = draft.clientSecret;
  return client;
}
