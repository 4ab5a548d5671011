// A server's sign-in (ttmcp's OAuth addition, SPEC §10), as parts of its
// row: the state chip beside the endpoint, Sign in / Sign out among the
// actions, and — where discovery failed because the server wants a
// sign-in — what that means and the button to do it. Every part shows
// nothing for a server without auth (TauriTavern's API has none) or one
// that never asked.

import type { McpServerAuth, TauriTavernMcpServer } from '../../../../jsapi/tauritavern-mcp';
import { useTr } from '../../base/tr';

/** The code of a refusal for want of authorization (discovery, calls). */
export const AUTH_REQUIRED = 'mcp.auth_required';

/** Whether an error (its message starts with its code) says the server wants a sign-in. */
export function isAuthRequired(error: string | undefined): boolean {
  return error !== undefined && error.startsWith(AUTH_REQUIRED + ':');
}

/** Whether the server asks for a (new) sign-in: never signed in, or short of a scope. */
export function needsSignIn(auth: McpServerAuth | undefined): boolean {
  if (!auth) return false;
  return auth.state === 'required' || (auth.state === 'signed_in' && auth.challenge?.error === 'insufficient_scope');
}

/** auth marked "needs sign-in" after a refusal the list has not seen yet. */
export function markRequired(auth: McpServerAuth | undefined): McpServerAuth | undefined {
  if (!auth || auth.state !== 'none') return auth;
  return { ...auth, state: 'required' };
}

/**
 * The origin of a redirect URI that is plain http at a name other than
 * localhost or a loopback address (a page opened at a LAN address): many
 * authorization servers refuse to send the user back there. Else undefined.
 */
export function lanHttpOrigin(redirectUri: string | undefined): string | undefined {
  if (redirectUri === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(redirectUri);
  } catch {
    return undefined;
  }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || /^127\./.test(host) || host === '::1';
  return u.protocol === 'http:' && !loopback ? u.origin : undefined;
}

function formatTime(iso: string): string {
  const t = new Date(iso);
  return Number.isNaN(t.getTime()) ? iso : t.toLocaleString();
}

/** The sign-in state chip: Signed in, Needs sign-in, Needs more access; nothing otherwise. */
export function AuthChip(props: { server: TauriTavernMcpServer }) {
  const tr = useTr();
  const auth = props.server.auth;
  if (!auth || auth.state === 'none') return null;
  if (needsSignIn(auth)) {
    const more = auth.state === 'signed_in';
    const scopes = auth.challenge?.scopes ?? [];
    return (
      <span
        className="tt-mcp-chip tt-mcp-auth tt-mcp-auth-required"
        title={scopes.length > 0 ? tr('auth_scopes', { scopes: scopes.join(' ') }) : undefined}
      >
        <i className="fa-solid fa-key" aria-hidden="true" /> {more ? tr('auth_more_access') : tr('auth_required')}
      </span>
    );
  }
  const details = [
    auth.scopes.length > 0 ? tr('auth_scopes', { scopes: auth.scopes.join(' ') }) : '',
    auth.expiresAt ? tr('auth_expires', { time: formatTime(auth.expiresAt) }) : '',
    auth.refreshable ? tr('auth_refreshable') : '',
    auth.authorizationServer ? tr('auth_server', { server: auth.authorizationServer }) : '',
  ].filter((d) => d !== '');
  return (
    <span className="tt-mcp-chip tt-mcp-auth tt-mcp-auth-signed-in" title={details.join('\n')}>
      <i className="fa-solid fa-lock" aria-hidden="true" /> {tr('auth_signed_in')}
    </span>
  );
}

export interface AuthHandlers {
  signIn(): void;
  signOut(): void;
}

/** Sign in (when the server asks) or Sign out (when signed in). */
export function AuthButtons(props: { server: TauriTavernMcpServer; busy: boolean; signingIn: boolean; on: AuthHandlers }) {
  const tr = useTr();
  const { server, busy, signingIn, on } = props;
  const auth = server.auth;
  if (!auth) return null;
  if (needsSignIn(auth) || signingIn) {
    return (
      <button type="button" className="menu_button menu_button_icon tt-mcp-sign-in" disabled={busy} onClick={on.signIn}>
        <i className={signingIn ? 'fa-solid fa-spinner fa-spin' : 'fa-solid fa-right-to-bracket'} aria-hidden="true" />
        <span>{signingIn ? tr('signing_in') : tr('sign_in')}</span>
      </button>
    );
  }
  if (auth.state === 'signed_in') {
    return (
      <button
        type="button"
        className="menu_button tt-mcp-icon-button"
        title={tr('sign_out')}
        aria-label={tr('sign_out')}
        disabled={busy}
        onClick={on.signOut}
      >
        <i className="fa-solid fa-right-from-bracket" aria-hidden="true" />
      </button>
    );
  }
  return null;
}

/** Where discovery failed because the server wants a sign-in: why, and the way out. */
export function AuthRequiredNotice(props: { server: TauriTavernMcpServer; error: string | undefined; busy: boolean; on?: AuthHandlers }) {
  const tr = useTr();
  if (!isAuthRequired(props.error) || !props.server.auth || !props.on) return null;
  const lan = lanHttpOrigin(props.server.auth.redirectUri);
  return (
    <div className="tt-mcp-auth-notice" role="note">
      <p>
        <i className="fa-solid fa-key" aria-hidden="true" /> {tr('auth_required_explained')}
      </p>
      <p className="tt-mcp-note">{tr('auth_sign_in_hint')}</p>
      {lan !== undefined && <p className="tt-mcp-note tt-mcp-auth-lan">{tr('auth_lan_http_hint', { origin: lan })}</p>}
      <button type="button" className="menu_button menu_button_icon tt-mcp-sign-in" disabled={props.busy} onClick={props.on.signIn}>
        <i className="fa-solid fa-right-to-bracket" aria-hidden="true" />
        <span>{tr('sign_in')}</span>
      </button>
    </div>
  );
}
