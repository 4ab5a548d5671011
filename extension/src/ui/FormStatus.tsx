// The foot of a dialog's form: what it is doing ("Saving…") and what went
// wrong, announced to assistive technology (status, alert).

export function FormStatus(props: { busy?: string | undefined; error?: string | undefined }) {
  return (
    <>
      {props.busy !== undefined && (
        <p className="tt-mcp-note" role="status">
          {props.busy}
        </p>
      )}
      {props.error !== undefined && (
        <p className="tt-mcp-error" role="alert">
          {props.error}
        </p>
      )}
    </>
  );
}
