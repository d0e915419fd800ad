import { DocwrightError } from '../errors.ts';
import { newOperatorId } from '../ids.ts';
import type { Store } from '../store/database.ts';
import { isUniqueViolation } from '../store/dialect.ts';
import type { OperatorRow } from '../store/schema.ts';
import {
  CURRENT_PARAMS,
  hashPassword,
  needsRehash,
  PASSWORD_MAX_CHARS,
  passwordProblem,
  verifyPassword,
} from './passwords.ts';

/**
 * Operator accounts: the people who sign in to the dashboard (docs/dashboard.mdx). Identified by
 * e-mail address, case-insensitively (stored lower-cased); passwords hashed with scrypt.
 */

/** An operator as shown anywhere: never the password hash. */
export interface OperatorView {
  id: string;
  email: string;
  createdAt: string;
  updatedAt: string;
  lastSignInAt: string | null;
  disabledAt: string | null;
}

export const operatorView = (row: OperatorRow): OperatorView => ({
  id: row.id,
  email: row.email,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  lastSignInAt: row.last_sign_in_at,
  disabledAt: row.disabled_at,
});

export interface OperatorService {
  create(input: { email: string; password: string }): Promise<OperatorView>;
  /**
   * The operator whose credentials these are, or `unauthorized` with one message whatever
   * was wrong (unknown e-mail, wrong password, disabled account), after the same work.
   */
  verify(email: string, password: string): Promise<OperatorView>;
  /** Sets a new password and signs the operator out everywhere. */
  changePassword(email: string, password: string): Promise<OperatorView>;
  /** Idempotent; signs the operator out everywhere. */
  disable(email: string): Promise<OperatorView>;
  list(): Promise<OperatorView[]>;
  /**
   * Creates the first account (`DOCWRIGHT_ADMIN_PASSWORD`) when there is none; undefined
   * when one exists, also when another process created it at the same moment.
   */
  createFirst(input: { email: string; password: string }): Promise<OperatorView | undefined>;
  /** Records a sign-in that checked no password (the first account's one-time page signs it in). */
  recordSignIn(id: string): Promise<void>;
}

const EMAIL_MAX_CHARS = 254;
const emailPattern = /^[^\s@]+@[^\s@]+$/;

/** The stored form of an e-mail address: trimmed and lower-cased. */
export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

function invalid(field: string, message: string): DocwrightError {
  return new DocwrightError('invalid-request', `${field} ${message}`, { fields: [{ field, message }] });
}

function checkedEmail(email: string): string {
  const normalised = normaliseEmail(email);
  if (normalised === '') throw invalid('email', 'must not be empty');
  if (normalised.length > EMAIL_MAX_CHARS)
    throw invalid('email', `must be at most ${EMAIL_MAX_CHARS} characters`);
  if (!emailPattern.test(normalised)) throw invalid('email', 'must be an address such as name@example.com');
  return normalised;
}

function checkPassword(password: string): void {
  const problem = passwordProblem(password);
  if (problem) throw invalid('password', problem);
}

/**
 * Checks a new account's email and password as `create` does, without hashing: a form can be
 * answered before anything is spent on it. Returns the email as it is stored.
 */
export function checkNewOperator(input: { email: string; password: string }): string {
  const email = checkedEmail(input.email);
  checkPassword(input.password);
  return email;
}

/**
 * A well-formed hash with the current parameters that no password matches: verifying
 * against it for an unknown e-mail costs what verifying a real account costs.
 */
const DUMMY_HASH = `scrypt$N=${CURRENT_PARAMS.N},r=${CURRENT_PARAMS.r},p=${CURRENT_PARAMS.p}$${'A'.repeat(22)}$${'A'.repeat(43)}`;

export function createOperatorService(deps: { store: Store; now?: () => Date }): OperatorService {
  const { db } = deps.store;
  const now = deps.now ?? (() => new Date());
  const badCredentials = () => new DocwrightError('unauthorized', 'the email or password is not correct');

  const find = (email: string) =>
    db.selectFrom('operators').selectAll().where('email', '=', email).executeTakeFirst();

  const findOrThrow = async (email: string): Promise<OperatorRow> => {
    const row = await find(normaliseEmail(email));
    if (!row) throw new DocwrightError('not-found', `no operator has the email ${normaliseEmail(email)}`);
    return row;
  };

  const insert = async (email: string, password: string): Promise<OperatorRow> => {
    const at = now().toISOString();
    const row: OperatorRow = {
      id: newOperatorId(),
      email,
      password_hash: await hashPassword(password),
      created_at: at,
      updated_at: at,
      last_sign_in_at: null,
      disabled_at: null,
    };
    await db.insertInto('operators').values(row).execute();
    return row;
  };

  return {
    async create(input) {
      const email = checkNewOperator(input);
      try {
        return operatorView(await insert(email, input.password));
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new DocwrightError('operator-exists', `an operator with the email ${email} already exists`, {
            fields: [{ field: 'email', message: 'is already taken' }],
            cause: error,
          });
        }
        throw error;
      }
    },

    async verify(email, password) {
      const normalised = normaliseEmail(email);
      // Absurd input gets the same answer, without hashing a megabyte.
      const row =
        normalised.length <= EMAIL_MAX_CHARS && password.length <= 4 * PASSWORD_MAX_CHARS
          ? await find(normalised)
          : undefined;
      const matches = await verifyPassword(password, row?.password_hash ?? DUMMY_HASH);
      if (!row || !matches || row.disabled_at) throw badCredentials();
      const at = now().toISOString();
      const update: Partial<OperatorRow> = { last_sign_in_at: at };
      // Parameters raised since this hash was made: the password is at hand, upgrade it.
      if (needsRehash(row.password_hash)) {
        update.password_hash = await hashPassword(password);
        update.updated_at = at;
      }
      await db.updateTable('operators').set(update).where('id', '=', row.id).execute();
      return operatorView({ ...row, ...update });
    },

    async recordSignIn(id) {
      await db
        .updateTable('operators')
        .set({ last_sign_in_at: now().toISOString() })
        .where('id', '=', id)
        .execute();
    },

    async changePassword(email, password) {
      checkPassword(password);
      const row = await findOrThrow(email);
      const update = { password_hash: await hashPassword(password), updated_at: now().toISOString() };
      await db.transaction().execute(async (trx) => {
        await trx.updateTable('operators').set(update).where('id', '=', row.id).execute();
        await trx.deleteFrom('sessions').where('operator_id', '=', row.id).execute();
      });
      return operatorView({ ...row, ...update });
    },

    async disable(email) {
      const row = await findOrThrow(email);
      const at = now().toISOString();
      await db.transaction().execute(async (trx) => {
        await trx
          .updateTable('operators')
          .set({ disabled_at: at, updated_at: at })
          .where('id', '=', row.id)
          .where('disabled_at', 'is', null)
          .execute();
        await trx.deleteFrom('sessions').where('operator_id', '=', row.id).execute();
      });
      return operatorView((await find(row.email)) ?? row);
    },

    async list() {
      const rows = await db.selectFrom('operators').selectAll().orderBy('id').execute();
      return rows.map(operatorView);
    },

    async createFirst(input) {
      const email = checkNewOperator(input);
      const any = await db.selectFrom('operators').select('id').limit(1).executeTakeFirst();
      if (any) return undefined;
      try {
        return operatorView(await insert(email, input.password));
      } catch (error) {
        // Another process starting at the same moment got there first.
        if (isUniqueViolation(error)) return undefined;
        throw error;
      }
    },
  };
}
