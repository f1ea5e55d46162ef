/** The path of Scalar's browser bundle (see scalar-bundle.js). */
export declare const scalarBundlePath: string;
