/** One field of a request that failed validation: its dotted path and what is wrong with it. */
export interface FieldError {
  field: string;
  message: string;
}
