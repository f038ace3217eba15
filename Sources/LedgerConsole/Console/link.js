// A link of a lookup's chain that does not hold, for every module that checks one (lookup.js,
// shards.js): its message reads as the Swift verifier's, "link: reason". Contract:
//   LinkError(link, reason): .link the link's name, .reason the sentence after it.
//   refuse(link, reason) throws one.

export class LinkError extends Error {
  constructor(link, message) {
    super(`${link}: ${message}`);
    this.name = 'LinkError';
    this.link = link;
    this.reason = message;
  }
}
export const refuse = (link, message) => { throw new LinkError(link, message); };
