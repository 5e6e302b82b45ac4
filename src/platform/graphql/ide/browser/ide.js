/*
 * The GraphQL IDE page (served by src/platform/graphql/ide/index.ts): a bar to sign in with the development identity provider
 * or to paste a bearer token, over GraphiQL. Every request GraphiQL sends, the schema's introspection included,
 * carries that token as `Authorization: Bearer`, unless the headers editor sets Authorization itself. Subscriptions
 * run over WebSocket (graphql-ws), the token in `connection_init`.
 * Plain browser script over the UMD globals React, ReactDOM, GraphiQL and graphqlWs: no build step.
 */
(function () {
  'use strict';

  const config = JSON.parse(document.getElementById('ide-config').textContent);
  // Per tab and gone with the browser session: the token is short-lived and bound to this machine's address anyway.
  const TOKEN_KEY = 'tender-bff.ide.token';
  const status = document.getElementById('ide-status');
  const signOut = document.getElementById('ide-sign-out');
  const signIn = document.getElementById('ide-sign-in');
  const tokenForm = document.getElementById('ide-token');
  const root = ReactDOM.createRoot(document.getElementById('graphiql'));
  let token = sessionStorage.getItem(TOKEN_KEY) || '';

  /** What the token says of itself (for the status line only; the service verifies it). */
  function claims(jwt) {
    try {
      const payload = jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
      return JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(payload), (c) => c.charCodeAt(0))));
    } catch {
      return {};
    }
  }

  function hasAuthorization(headers) {
    return Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
  }

  /**
   * The operation GraphiQL runs (kind and name): the named one, or the document's only one. Read from the text sent, not
   * from GraphiQL's parsed document, which can still be the previous tab's right after a tab switch.
   */
  function chosenOperation(params) {
    const text = params.query.replace(/"""[\s\S]*?"""|"(?:[^"\\\n]|\\.)*"|#[^\n]*/g, ' ');
    const operations = [...text.matchAll(/(?:^|[\s}])(query|mutation|subscription)\b\s*([_A-Za-z][_0-9A-Za-z]*)?/g)]
      .map((m) => ({ kind: m[1], name: m[2] }));
    if (/^\s*\{/.test(text)) operations.unshift({ kind: 'query', name: undefined });
    return operations.find((o) => params.operationName && o.name === params.operationName)
      || (operations.length === 1 ? operations[0] : undefined);
  }

  /**
   * A subscription's results as GraphiQL reads them (an async iterable), over a WebSocket connection of its own,
   * closed when GraphiQL stops it.
   */
  function subscribeOverWebSocket(params, authorization) {
    const client = graphqlWs.createClient({
      url: location.origin.replace(/^http/, 'ws') + config.endpoint,
      connectionParams: authorization ? { Authorization: authorization } : {},
      retryAttempts: 0,
    });
    const results = client.iterate(params);
    return {
      next: () => results.next(),
      return: async () => {
        await results.return();
        await client.dispose();
        return { done: true, value: undefined };
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  /** A new fetcher per token: GraphiQL fetches the schema again whenever its fetcher changes. */
  function fetcherFor(currentToken) {
    return async function fetcher(params, options) {
      const headers = { 'Content-Type': 'application/json', Accept: 'application/graphql-response+json, application/json' };
      Object.assign(headers, options && options.headers);
      if (currentToken && !hasAuthorization(headers)) headers.Authorization = 'Bearer ' + currentToken;
      // GraphiQL can also pass the previous tab's operation name: send the name of the operation the text holds.
      const chosen = chosenOperation(params);
      if (chosen && params.operationName && chosen.name !== params.operationName) params = { ...params, operationName: chosen.name };
      if (chosen && chosen.kind === 'subscription') {
        const name = Object.keys(headers).find((h) => h.toLowerCase() === 'authorization');
        return subscribeOverWebSocket(params, name && headers[name]);
      }
      const response = await fetch(config.endpoint, { method: 'POST', headers, body: JSON.stringify(params) });
      return response.json();
    };
  }

  function render() {
    root.render(React.createElement(GraphiQL, {
      fetcher: fetcherFor(token),
      defaultQuery: config.exampleQuery,
      defaultTabs: [{ query: config.exampleQuery }, { query: config.subscriptionExample }],
      shouldPersistHeaders: false,
    }));
  }

  function showStatus(message, isError) {
    status.textContent = message;
    status.className = isError ? 'ide-error' : '';
  }

  function showSignedIn() {
    signOut.hidden = !token;
    if (!token) {
      showStatus('Not signed in: the schema and every operation need a bearer token.', false);
      return;
    }
    const { email, sub, exp } = claims(token);
    const until = exp ? ' until ' + new Date(exp * 1000).toLocaleTimeString() : '';
    showStatus('Authorization: Bearer token of ' + (email || sub || 'an unknown user') + until + '.', false);
  }

  function useToken(value) {
    token = value;
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
    showSignedIn();
    render();
  }

  if (signIn) {
    signIn.addEventListener('submit', async (event) => {
      event.preventDefault();
      const form = new FormData(signIn);
      const body = new URLSearchParams({
        grant_type: 'password',
        client_id: config.clientId,
        username: String(form.get('username')),
        password: String(form.get('password')),
        scope: config.scope,
      });
      showStatus('Signing in...', false);
      try {
        const response = await fetch(config.tokenEndpoint, { method: 'POST', body });
        const answer = await response.json();
        if (!response.ok) {
          showStatus('Sign-in refused: ' + (answer.error_description || answer.error || response.status), true);
          return;
        }
        signIn.reset();
        useToken(answer.access_token);
      } catch (err) {
        showStatus('Sign-in failed: ' + err.message, true);
      }
    });
  }

  tokenForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const field = tokenForm.elements.namedItem('token');
    const value = field.value.trim().replace(/^Bearer\s+/i, '');
    field.value = '';
    if (value) useToken(value);
  });

  signOut.addEventListener('click', () => useToken(''));

  showSignedIn();
  render();
})();
