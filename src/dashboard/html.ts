/**
 * Typed HTML templates: a tagged template whose interpolations are escaped unless they are
 * already `Html` (another template, or `unsafeHtml` for trusted markup). Arrays are joined;
 * `null`, `undefined` and `false` render nothing, so `${cond && html`…`}` reads naturally.
 * Escaping is the default, so model output, file names and job text can never become markup.
 */
export class Html {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

export type Renderable = Html | string | number | null | undefined | false | Renderable[];

const entities: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => entities[c]!);

function render(value: Renderable): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Renderable[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** Markup that is trusted as it is (never anything a user, client or model sent). */
export const unsafeHtml = (markup: string): Html => new Html(markup);
