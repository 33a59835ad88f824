/** Picking one kind of a thing (an alert rule's type, a channel's type) from cards that each say what it is for, with the API's message under them. */

export function KindPicker<T extends string>({
  label,
  name,
  options,
  kinds,
  value,
  onChange,
  error,
}: {
  label: string;
  name: string;
  options: readonly T[];
  kinds: Record<T, { label: string; pitch: string }>;
  value: string | null | undefined;
  onChange: (kind: T) => void;
  error: string | undefined;
}) {
  return (
    <>
      <div className="choice-grid" role="radiogroup" aria-label={label}>
        {options.map((t) => (
          <label key={t} className={`choice ${value === t ? "on" : ""}`}>
            <input type="radio" name={name} value={t} checked={value === t} onChange={() => onChange(t)} />
            <span>
              <strong>{kinds[t].label}</strong>
              <span className="muted">{kinds[t].pitch}</span>
            </span>
          </label>
        ))}
      </div>
      {error ? (
        <div className="field-error" role="alert">
          {error}
        </div>
      ) : null}
    </>
  );
}
