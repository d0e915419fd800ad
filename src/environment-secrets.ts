/**
 * The secrets a deployment gives docwright through its environment: model provider keys, the
 * key that seals project credentials, the first operator's password and the database password. Known to every redactor of
 * the process (logs, doctor output) although no project holds them.
 */
export function environmentSecrets(env: NodeJS.ProcessEnv): string[] {
  const secrets = [
    env.ANTHROPIC_API_KEY,
    env.OPENAI_API_KEY,
    env.DOCWRIGHT_OPENAI_COMPATIBLE_API_KEY,
    env.DOCWRIGHT_SECRET_KEY,
    env.DOCWRIGHT_ADMIN_PASSWORD,
  ];
  try {
    const password = env.DATABASE_URL ? new URL(env.DATABASE_URL).password : '';
    if (password) secrets.push(password, decodeURIComponent(password));
  } catch {
    // Not a URL: configuration loading reports that.
  }
  return secrets.filter((s): s is string => typeof s === 'string' && s.trim() !== '');
}
