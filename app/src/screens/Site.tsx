export default function Site(_props: Record<string, string>) {
  return <main className="centered">Site</main>;
}
