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

/** The group and platform filters of the device list and the search page (0 or absent: any). */
export function GroupPlatformFilters(props: {
  groups: readonly { id: number; label: string }[];
  platforms: readonly { id: number; name: string }[];
  groupId: number | undefined;
  templateId: number | undefined;
}) {
  return (
    <>
      <FilterSelect
        label="Group"
        name="group_id"
        any="All groups"
        choices={props.groups.map((g) => ({ value: g.id, label: g.label }))}
        selected={props.groupId || undefined}
      />
      <FilterSelect
        label="Platform"
        name="template_id"
        any="All platforms"
        choices={props.platforms.map((t) => ({ value: t.id, label: t.name }))}
        selected={props.templateId || undefined}
      />
    </>
  );
}
