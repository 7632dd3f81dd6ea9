import { formErrors, type SaveAttempt } from "../../api";
import { ErrorNotice } from "../../components/Dialog";
import { TextAreaField, TextField } from "../../components/Inputs";

const nameHint = "Unique in the organization (ignoring case), at most 200 characters.";
const descriptionHint = "What it tests, for the people who open it. At most 2000 characters.";

/** Name and description, as both the create and the edit dialog ask them. */
export function ProjectFields({
  name,
  description,
  setName,
  setDescription,
  save,
}: {
  name: string;
  description: string;
  setName: (name: string) => void;
  setDescription: (description: string) => void;
  save: SaveAttempt;
}) {
  const errors = formErrors(save, { name, description });
  return (
    <>
      <TextField
        label="Name"
        hint={nameHint}
        error={errors.at("name")}
        required
        autoFocus
        value={name}
        onChange={setName}
      />
      <TextAreaField
        label="Description"
        hint={descriptionHint}
        error={errors.at("description")}
        optional
        rows={3}
        value={description}
        onChange={setDescription}
      />
      {errors.other && <ErrorNotice error={save.error} />}
    </>
  );
}
