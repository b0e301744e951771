import { type ConsoleApp, exactField, frameOf, type PageDeps, redirectWith } from '../context.js';
import { Layout } from '../layout.js';
import { breakAfterSeparators } from '../soft-breaks.js';

interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  description?: string;
}

interface Setting {
  key: string;
  value: unknown;
  schema: JsonSchema;
}

/** How a setting's value is edited: chosen from its JSON Schema. */
type Editor = 'boolean' | 'number' | 'enum' | 'string' | 'json';

function editorOf(schema: JsonSchema): Editor {
  const type = Array.isArray(schema.type) ? schema.type.find((name) => name !== 'null') : schema.type;
  if (schema.enum) return 'enum';
  if (type === 'boolean') return 'boolean';
  if (type === 'integer' || type === 'number') return 'number';
  if (type === 'string') return 'string';
  return 'json';
}

function SettingInput(props: { id: string; setting: Setting; editor: Editor }) {
  const { id, setting, editor } = props;
  if (editor === 'boolean') {
    return (
      <select id={id} name="value">
        <option value="true" selected={setting.value === true}>
          true
        </option>
        <option value="false" selected={setting.value !== true}>
          false
        </option>
      </select>
    );
  }
  if (editor === 'enum') {
    return (
      <select id={id} name="value">
        {(setting.schema.enum ?? []).map((option) => (
          <option value={JSON.stringify(option)} selected={option === setting.value}>
            {String(option)}
          </option>
        ))}
      </select>
    );
  }
  if (editor === 'number') {
    return (
      <input
        id={id}
        name="value"
        type="number"
        step="any"
        value={String(setting.value ?? '')}
        min={setting.schema.minimum}
        max={setting.schema.maximum}
      />
    );
  }
  if (editor === 'string') return <input id={id} name="value" value={String(setting.value ?? '')} />;
  return (
    <textarea id={id} name="value" rows={3}>
      {JSON.stringify(setting.value ?? null, null, 2)}
    </textarea>
  );
}

/** The submitted text as the setting's value for its editor. */
function parseValue(editor: string | undefined, text: string): unknown {
  if (editor === 'boolean') return text === 'true';
  if (editor === 'number') return Number(text);
  if (editor === 'string') return text;
  return JSON.parse(text);
}

/** Settings: the allow-list of runtime settings, each as a form built from its JSON Schema. */
export function registerSettings(app: ConsoleApp, { api, base }: PageDeps): void {
  app.get('/settings', async (c) => {
    const { settings } = await api<{ settings: Setting[] }>('agent-identity/settings/list');
    const frame = frameOf(c, base);
    return c.html(
      <Layout frame={frame} title="Settings" current="Settings">
        {settings.length === 0 ? <p class="empty">No runtime settings.</p> : null}
        <div class="settings">
          {settings.map((setting, index) => {
            const editor = editorOf(setting.schema);
            const id = `setting-${index}`;
            return (
              <form method="post" action={`${base}/settings/set`} class="card">
                <input type="hidden" name="_csrf" value={frame.session.csrf} />
                <input type="hidden" name="key" value={setting.key} />
                <input type="hidden" name="editor" value={editor} />
                <label for={id}>{breakAfterSeparators(setting.key)}</label>
                {setting.schema.description ? <p class="hint">{setting.schema.description}</p> : null}
                <SettingInput id={id} setting={setting} editor={editor} />
                <button type="submit" aria-label={`Save ${setting.key}`}>
                  Save
                </button>
              </form>
            );
          })}
        </div>
      </Layout>,
    );
  });

  app.post('/settings/set', async (c) => {
    const form = await c.req.parseBody();
    const key = exactField(form, 'key') ?? '';
    let value: unknown;
    try {
      value = parseValue(exactField(form, 'editor'), typeof form.value === 'string' ? form.value : '');
    } catch {
      return redirectWith(c, `${base}/settings`, { kind: 'error', text: `${key}: the value is not valid JSON.` });
    }
    await api('agent-identity/settings/set', { key, value });
    return redirectWith(c, `${base}/settings`, { kind: 'ok', text: `${key} saved.` });
  });
}
