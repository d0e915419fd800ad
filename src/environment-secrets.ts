/**
 * The variables through which a deployment gives docwright the keys of the services it uses:
 * model providers, the key that seals project credentials, Slack's bot token and signing secret.
 */
export const SERVICE_SECRET_VARIABLES = [
  'ANTHROPIC_API_KEY',
  'OPENAI_API_KEY',
  'DOCWRIGHT_OPENAI_COMPATIBLE_API_KEY',
  'DOCWRIGHT_SECRET_KEY',
  'DOCWRIGHT_SLACK_BOT_TOKEN',
  'DOCWRIGHT_SLACK_SIGNING_SECRET',
] as const;

/**
 * The service keys set in `env` (SERVICE_SECRET_VARIABLES): what a job's outputs are scrubbed
 * of besides the project's own secrets (src/pipeline/run-secrets.ts). Not the passwords of
 * environmentSecrets: a database password such as `postgres` is a common word in documentation.
 */
export function serviceSecrets(env: NodeJS.ProcessEnv): string[] {
  return SERVICE_SECRET_VARIABLES.map((name) => env[name]).filter(
    (s): s is string => typeof s === 'string' && s.trim() !== '',
  );
}

/**
 * The secrets a deployment gives docwright through its environment: the service keys, the first
 * operator's password and the database password. Known to every redactor of the process (logs,
 * doctor output) although no project holds them.
 */
export function environmentSecrets(env: NodeJS.ProcessEnv): string[] {
  const secrets = [...serviceSecrets(env), env.DOCWRIGHT_ADMIN_PASSWORD];
  try {
    const password = env.DATABASE_URL ? new URL(env.DATABASE_URL).password : '';
    if (password) secrets.push(password, decodeURIComponent(password));
  } catch {
    // Not a URL: configuration loading reports that.
  }
  return secrets.filter((s): s is string => typeof s === 'string' && s.trim() !== '');
}
