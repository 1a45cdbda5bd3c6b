/** Our data classes under Have I Been Pwned's names ("other" has none there and is left out). */
export const DATA_CLASS_NAMES: Record<string, string> = {
  email: 'Email addresses',
  username: 'Usernames',
  password: 'Passwords',
  ip: 'IP addresses',
  phone: 'Phone numbers',
  name: 'Names',
  address: 'Physical addresses',
  dob: 'Dates of birth',
};

/** Have I Been Pwned's data class names as ours (the ones we keep; others have none). */
export const DATA_CLASS_OF: Record<string, string> = Object.fromEntries(Object.entries(DATA_CLASS_NAMES).map(([ours, theirs]) => [theirs, ours]));
