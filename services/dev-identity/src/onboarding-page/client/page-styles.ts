// The stylesheet of the onboarding page, inlined there and allowed by hash; the admin
// console's preview of the page uses the same rules. Fields sit on a grid of
// six columns: uiConfig.width full, half and third span 6, 3 and 2 (spec 2.13); narrow
// screens stack them.
export const onboardingPageStyles = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f7;color:#1f2328}
main{max-width:44rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:.75rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.4rem;margin:0 0 .25rem}
h2{font-size:1.1rem;margin:1.5rem 0 0;padding-top:1rem;border-top:1px solid #d0d7de}
#onboarding-fields>section:first-child h2{margin-top:.5rem;padding-top:0;border-top:0}
.environment{margin:0 0 1rem;color:#57606a;font-size:.9rem}
.section{display:grid;grid-template-columns:repeat(6,minmax(0,1fr));gap:0 1rem}
.field{grid-column:span 6;margin-top:1rem;min-width:0}
.field.half{grid-column:span 3}
.field.third{grid-column:span 2}
@media (max-width:36rem){.field.half,.field.third{grid-column:span 6}}
fieldset{margin:0;padding:0;border:0;min-width:0}
label,legend{display:block;margin:0 0 .25rem;padding:0;font-weight:600}
.choice{display:flex;align-items:center;gap:.5rem;margin:.15rem 0;font-weight:400}
.choice input{width:auto;margin:0}
.choices-inline{display:flex;gap:1.5rem}
.required{color:#cf222e;margin-left:.2rem}
.description,.help{margin:.25rem 0 0;color:#57606a;font-size:.9rem}
input,select,textarea{width:100%;padding:.55rem .7rem;border:1px solid #d0d7de;border-radius:.4rem;font:inherit;background:#fff}
textarea{min-height:6rem;resize:vertical}
input.country{text-transform:uppercase;max-width:8rem}
input.country::placeholder{text-transform:none}
[aria-invalid="true"]{border-color:#cf222e}
.field-error{margin:.25rem 0 0;color:#82071e;font-size:.9rem}
button{margin-top:1.5rem;width:100%;padding:.65rem;border:0;border-radius:.4rem;background:#0969da;color:#fff;font:inherit;font-weight:600;cursor:pointer}
button:disabled{opacity:.6;cursor:progress}
.error{margin:1rem 0;padding:.6rem .8rem;border-radius:.4rem;background:#ffebe9;color:#82071e}
.notice{margin:1rem 0;padding:.6rem .8rem;border-radius:.4rem;background:#ddf4ff;color:#0a3069}
.error p,.notice p{margin:0}.error p+p,.notice p+p{margin-top:.25rem}
[hidden]{display:none!important}
`;
