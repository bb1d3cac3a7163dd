console.log("fixture");
//# sourceMappingURL=app-FIXTURE1.js.map
