/** A connection's ordered-delivery settings (docs/delivery.md, "Ordered delivery"). */
import { Check, Field } from "../components/forms";

type OnDlq = "continue" | "block";

export function OrderFields(props: {
  ordered: boolean;
  setOrdered: (v: boolean) => void;
  orderingKey: string;
  setOrderingKey: (v: string) => void;
  onDlq: OnDlq;
  setOnDlq: (v: OnDlq) => void;
  errors: Record<string, string>;
}) {
  const { ordered, setOrdered, orderingKey, setOrderingKey, onDlq, setOnDlq } = props;
  const fieldErrors = props.errors;
  return (
    <fieldset>
      <legend>Order</legend>
      <Check
        label="Deliver in order, one event at a time per key"
        checked={ordered}
        onChange={setOrdered}
        help="Other keys keep flowing while one key's head waits for its retry. Manual retries and replays are not held."
      />
      {ordered ? (
        <>
          <Field label="Ordering key" error={fieldErrors.ordering_key} help="A field path, as in filter rules (body.customer.id, headers.x-shop). Empty: the whole connection is one line.">
            {(p) => <input {...p} type="text" name="ordering_key" className="mono" value={orderingKey} placeholder="body.customer.id" onChange={(e) => setOrderingKey(e.target.value)} />}
          </Field>
          <Field label="When a key's head reaches the DLQ" error={fieldErrors.on_dlq}>
            {(p) => (
              <select {...p} name="on_dlq" value={onDlq} onChange={(e) => setOnDlq(e.target.value as "continue" | "block")}>
                <option value="continue">Move on to the key's next event</option>
                <option value="block">Block the key until it is redriven or skipped</option>
              </select>
            )}
          </Field>
        </>
      ) : null}
    </fieldset>
  );
}
