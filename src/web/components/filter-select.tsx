// A list filter's drop-down: a label, an "any" first choice (empty value), and the choices with the current one selected.

export interface FilterChoice {
  value: string | number;
  label: string;
}

/** `<label>Group <select name="group_id"><option value="">All groups</option>…</select></label>`, as every list filter draws it. */
export function FilterSelect(props: { label: string; name: string; any: string; choices: readonly FilterChoice[]; selected: string | number | undefined }) {
  return (
    <label>
      {props.label}
      <select name={props.name}>
        <option value="">{props.any}</option>
        {props.choices.map((c) => (
          <option value={String(c.value)} selected={props.selected !== undefined && String(c.value) === String(props.selected)}>
            {c.label}
          </option>
        ))}
      </select>
    </label>
  );
}
