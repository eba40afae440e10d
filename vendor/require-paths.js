// trackerlab (not vendored): tell RequireJS where the widget modules of embed-amd.js live, so that their
// webpack public path (the folder of the module's URL) is html-manager/ and the Font Awesome files load
// from there. Load it after requirejs/require.js and before html-manager/embed-amd.js.
(function () {
    var vendor = document.currentScript.src.replace(/[^/]*$/, "");
    window.require.config({ paths: { "@jupyter-widgets": vendor + "html-manager" } });
})();
