export default function Organization(_props: Record<string, string>) {
  return <main className="centered">Organization</main>;
}
