export interface RunOptions {
    'allow_write'?: (boolean);
    'allow_bash'?: (boolean);
    'max_output_chars'?: (number);
}
export interface RunOptions__Output {
    'allow_write': (boolean);
    'allow_bash': (boolean);
    'max_output_chars': (number);
}
