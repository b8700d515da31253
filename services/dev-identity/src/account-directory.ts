import { createHash, randomUUID } from 'node:crypto';
import type {
  DevAccount,
  DevAccountStatus,
  DevAccountView,
  DevStore,
} from './dev-identity-options.js';
import { hashPassword, isPasswordHash, verifyNoPassword, verifyPassword } from './passwords.js';

/** An account as the directory keeps it: a subject, a status and a password hash, always. */
type StoredAccount = DevAccountView & { passwordHash: string };

export type SignInResult =
  | { ok: true; account: DevAccountView }
  | { ok: false; reason: 'invalid_credentials' | 'suspended' };

export type Registration = { email: string; password: string; name?: string };

export type PasswordChangeResult = 'changed' | 'wrong_password' | 'unknown_account';

/**
 * The accounts of every environment. An account belongs to exactly one environment: the
 * same e-mail address in two environments is two unrelated accounts with different subjects.
 */
export type AccountDirectory = {
  /** An active account by subject; undefined when unknown or suspended. */
  findActive(environmentKey: string, subject: string): DevAccountView | undefined;
  exists(environmentKey: string, subject: string): boolean;
  signIn(environmentKey: string, email: string, password: string): Promise<SignInResult>;
  /** undefined when the e-mail address is taken in that environment. */
  register(environmentKey: string, registration: Registration): Promise<DevAccountView | undefined>;
  /** false for an unknown subject. */
  suspend(environmentKey: string, subject: string): Promise<boolean>;
  changePassword(
    environmentKey: string,
    subject: string,
    currentPassword: string,
    newPassword: string,
  ): Promise<PasswordChangeResult>;
  list(environmentKey: string): DevAccountView[];
};

/**
 * Loads the stored accounts, adds the seed accounts the store does not hold yet (by
 * environment and e-mail address; stored accounts win, so a suspension or a changed password
 * survives a restart), and saves the result when something was added.
 */
export async function openAccountDirectory(options: {
  environmentKeys: readonly string[];
  seed: readonly DevAccount[];
  store: DevStore<DevAccount> | undefined;
}): Promise<AccountDirectory> {
  const accounts = new AccountIndex();
  const changed = await loadAccounts(accounts, options);
  const persist = serialSaves(accounts, options.store);
  if (changed) await persist();

  return {
    findActive(environmentKey, subject) {
      const account = accounts.find(environmentKey, subject);
      return account === undefined || account.status !== 'active' ? undefined : toView(account);
    },
    exists: (environmentKey, subject) => accounts.find(environmentKey, subject) !== undefined,
    async signIn(environmentKey, email, password) {
      const account = accounts.byEmail.get(emailKey(environmentKey, email));
      const valid =
        account === undefined
          ? await verifyNoPassword(password)
          : await verifyPassword(password, account.passwordHash);
      if (account === undefined || !valid) return { ok: false, reason: 'invalid_credentials' };
      if (account.status === 'suspended') return { ok: false, reason: 'suspended' };
      return { ok: true, account: toView(account) };
    },
    register: (environmentKey, registration) =>
      registerAccount(accounts, persist, environmentKey, registration),
    async suspend(environmentKey, subject) {
      const account = accounts.find(environmentKey, subject);
      if (account === undefined) return false;
      if (account.status !== 'suspended') {
        account.status = 'suspended';
        await persist();
      }
      return true;
    },
    async changePassword(environmentKey, subject, currentPassword, newPassword) {
      const account = accounts.find(environmentKey, subject);
      if (account === undefined) return 'unknown_account';
      if (!(await verifyPassword(currentPassword, account.passwordHash))) return 'wrong_password';
      account.passwordHash = await hashPassword(newPassword);
      await persist();
      return 'changed';
    },
    list: (environmentKey) =>
      [...accounts.bySubject.values()]
        .filter((account) => account.environmentKey === environmentKey)
        .map(toView),
  };
}

/** The accounts of every environment, by subject and by e-mail address. */
class AccountIndex {
  readonly bySubject = new Map<string, StoredAccount>();
  readonly byEmail = new Map<string, StoredAccount>();

  add(account: StoredAccount): void {
    this.bySubject.set(subjectKey(account.environmentKey, account.subject), account);
    this.byEmail.set(emailKey(account.environmentKey, account.email), account);
  }

  find(environmentKey: string, subject: string): StoredAccount | undefined {
    return this.bySubject.get(subjectKey(environmentKey, subject));
  }
}

/**
 * Adds the stored accounts, then the seed accounts the store does not hold yet; answers
 * whether the store needs saving.
 */
async function loadAccounts(
  accounts: AccountIndex,
  options: {
    environmentKeys: readonly string[];
    seed: readonly DevAccount[];
    store: DevStore<DevAccount> | undefined;
  },
): Promise<boolean> {
  const known = new Set(options.environmentKeys);
  const stored = await options.store?.load();
  // A plain-text password in the store (edited by hand) is saved back as a hash.
  let changed = stored?.some((account) => account.passwordHash === undefined) ?? true;
  for (const [index, account] of (stored ?? []).entries()) {
    await addChecked(accounts, account, `stored account ${index}`, known);
  }
  const seedEmails = new Set<string>();
  for (const [index, account] of options.seed.entries()) {
    const key = emailKey(account.environmentKey, account.email);
    if (seedEmails.has(key)) {
      throw new Error(
        `accounts[${index}]: ${account.email} is repeated in ${account.environmentKey}`,
      );
    }
    seedEmails.add(key);
    if (accounts.byEmail.has(key)) continue; // the stored account wins
    await addChecked(accounts, account, `accounts[${index}]`, known);
    changed = true;
  }
  return changed;
}

/** Adds a configured or stored account; a repeated address or subject is a setting error. */
async function addChecked(
  accounts: AccountIndex,
  account: DevAccount,
  setting: string,
  known: ReadonlySet<string>,
): Promise<void> {
  checkAccount(account, setting, known);
  if (accounts.byEmail.has(emailKey(account.environmentKey, account.email))) {
    throw new Error(`${setting}: ${account.email} is repeated in ${account.environmentKey}`);
  }
  const subject = account.subject ?? seedSubject(account.environmentKey, account.email);
  if (accounts.bySubject.has(subjectKey(account.environmentKey, subject))) {
    throw new Error(`${setting}: subject ${subject} is repeated in ${account.environmentKey}`);
  }
  accounts.add({
    environmentKey: account.environmentKey,
    subject,
    email: account.email,
    emailVerified: account.emailVerified,
    ...(account.name === undefined ? {} : { name: account.name }),
    ...(account.picture === undefined ? {} : { picture: account.picture }),
    status: account.status ?? 'active',
    passwordHash: account.passwordHash ?? (await hashPassword(account.password ?? '')),
  });
}

/** Saves run one after the other, each with the whole list as it is when it starts. */
function serialSaves(
  accounts: AccountIndex,
  store: DevStore<DevAccount> | undefined,
): () => Promise<void> {
  let saving = Promise.resolve();
  return async () => {
    if (store === undefined) return;
    const next = saving.then(() => store.save([...accounts.bySubject.values()].map(toDevAccount)));
    saving = next.catch(() => undefined);
    await next;
  };
}

/** A new active account with a random subject; undefined when the address is taken. */
async function registerAccount(
  accounts: AccountIndex,
  persist: () => Promise<void>,
  environmentKey: string,
  registration: Registration,
): Promise<DevAccountView | undefined> {
  if (accounts.byEmail.has(emailKey(environmentKey, registration.email))) return undefined;
  const passwordHash = await hashPassword(registration.password);
  // Checked again: another registration may have taken the address while hashing.
  if (accounts.byEmail.has(emailKey(environmentKey, registration.email))) return undefined;
  const account: StoredAccount = {
    environmentKey,
    subject: randomUUID(),
    email: registration.email,
    // The development service sends no e-mail, so a new address counts as verified.
    emailVerified: true,
    ...(registration.name === undefined ? {} : { name: registration.name }),
    status: 'active',
    passwordHash,
  };
  accounts.add(account);
  await persist();
  return toView(account);
}

function checkAccount(account: DevAccount, setting: string, known: ReadonlySet<string>): void {
  if (!known.has(account.environmentKey)) {
    throw new Error(
      `${setting}: environmentKey "${account.environmentKey}" is not one of the environments (${[...known].join(', ')})`,
    );
  }
  if (!/^[^\s@]+@[^\s@]+$/.test(account.email)) {
    throw new Error(`${setting}: email "${account.email}" is not an e-mail address`);
  }
  if (account.passwordHash !== undefined && !isPasswordHash(account.passwordHash)) {
    throw new Error(`${setting}: passwordHash is not a scrypt hash of this service`);
  }
  if (account.passwordHash === undefined && (account.password ?? '') === '') {
    throw new Error(`${setting}: needs a password or a passwordHash`);
  }
  if (account.status !== undefined && !accountStatuses.includes(account.status)) {
    throw new Error(`${setting}: status must be one of ${accountStatuses.join(', ')}`);
  }
}

const accountStatuses: readonly DevAccountStatus[] = ['active', 'suspended'];

/**
 * A stable UUID for a seed account without a subject, so the gateway finds the same local
 * user after a restart even without an account store (UUID version 8, RFC 9562).
 */
export function seedSubject(environmentKey: string, email: string): string {
  const bytes = createHash('sha256')
    .update(`dev-identity seed subject\0${environmentKey}\0${email.toLowerCase()}`)
    .digest()
    .subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x80;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const subjectKey = (environmentKey: string, subject: string) => `${environmentKey}\n${subject}`;
const emailKey = (environmentKey: string, email: string) =>
  `${environmentKey}\n${email.trim().toLowerCase()}`;

function toView(account: StoredAccount): DevAccountView {
  return {
    environmentKey: account.environmentKey,
    subject: account.subject,
    email: account.email,
    emailVerified: account.emailVerified,
    ...(account.name === undefined ? {} : { name: account.name }),
    ...(account.picture === undefined ? {} : { picture: account.picture }),
    status: account.status,
  };
}

function toDevAccount(account: StoredAccount): DevAccount {
  return { ...toView(account), passwordHash: account.passwordHash };
}
