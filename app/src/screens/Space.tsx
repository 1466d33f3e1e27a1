export default function Space(_props: Record<string, string>) {
  return <main className="centered">Space</main>;
}
