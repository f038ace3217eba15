// JSON a verifier reads from signed bytes, held to one reading: JSON.parse keeps the last of a
// member name given twice in one object, and Swift's decoder need not, so a verifier refuses such
// text rather than guess which one the server meant. Contract:
//   repeatedName(text) → a member name some object of text (JSON that JSON.parse has read) holds
//   twice, at any depth, or undefined.

// Names are compared once their escapes are read (JSON.parse of the name's own text: "a" and
// "\u0061" are one name), code unit by code unit: as code points, unnormalised.
export function repeatedName(text) {
  const open = [];        // per open container: its names so far (a Set), or null for an array
  let nameNext = false;   // just after { or after , in an object: the next string is a name
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let end = i + 1;
      // Past \x, whatever x is (" or \ too); the hex digits of \uXXXX are never a quote.
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (nameNext) {
        const name = JSON.parse(text.slice(i, end + 1)), names = open[open.length - 1];
        if (names.has(name)) return name;
        names.add(name);
        nameNext = false;
      }
      i = end;
    } else if (c === '{' || c === '[') {
      open.push(c === '{' ? new Set() : null);
      nameNext = c === '{';
    } else if (c === '}' || c === ']') {
      open.pop();
      nameNext = false;
    } else if (c === ',') {
      nameNext = open[open.length - 1] !== null;
    }
  }
  return undefined;
}
