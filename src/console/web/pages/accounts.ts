/** The login page and the accounts page (admins only). */
import { ROLES } from '../../store/accounts.js';
import { knownTimeZones } from '../../time-zone.js';
import { html, timeHtml, type Html } from '../html.js';

export function loginBody(loginCsrf: string, error: string | null): Html {
  return html`${error === null ? html`` : html`<p class="error" id="login-error">${error}</p>`}
    <form method="post" action="/login" class="login">
      <input type="hidden" name="csrf" value="${loginCsrf}" />
      <label>Account <input type="text" name="name" autocomplete="username" required maxlength="64" /></label>
      <label
        >Password <input type="password" name="password" autocomplete="current-password" required maxlength="1024"
      /></label>
      <button type="submit" id="login-submit">Log in</button>
    </form>`;
}

export function accountsBody(
  users: { name: string; role: string; created_at: string; time_zone: string | null }[],
  csrf: string,
  message: string | null,
): Html {
  const roles = ROLES.map((r) => html`<option>${r}</option>`);
  return html`${message === null ? html`` : html`<p class="notice">${message}</p>`}
    <table class="list" id="accounts">
      <thead>
        <tr>
          <th>account</th>
          <th>role</th>
          <th>created</th>
          <th>time zone</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        ${users.map(
          (u) =>
            html`<tr>
              <td>${u.name}</td>
              <td>${u.role}</td>
              <td>${timeHtml(u.created_at)}</td>
              <td>${u.time_zone ?? "the console's"}</td>
              <td>
                <form method="post" action="/accounts/delete" class="inline">
                  <input type="hidden" name="csrf" value="${csrf}" />
                  <input type="hidden" name="name" value="${u.name}" /><button type="submit">Remove</button>
                </form>
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
    <h2>Add or change an account</h2>
    <form method="post" action="/accounts" class="stack">
      <input type="hidden" name="csrf" value="${csrf}" />
      <label>Account <input type="text" name="name" required maxlength="64" pattern="[A-Za-z0-9._@\\-]{1,64}" /></label>
      <label
        >Role
        <select name="role">
          ${roles}
        </select></label
      >
      <label
        >Password (blank keeps an account's own; a new one ends its sessions)
        <input type="password" name="password" autocomplete="new-password" minlength="10" maxlength="1024"
      /></label>
      <label
        >Time zone (blank: the console's)
        <input type="text" name="timeZone" list="time-zones" maxlength="64" placeholder="Europe/Berlin" />
      </label>
      <datalist id="time-zones">${knownTimeZones().map((z) => html`<option value="${z}"></option>`)}</datalist>
      <button type="submit">Save</button>
    </form>`;
}
