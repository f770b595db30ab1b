import { describeWorkshopPart, describeWorkshopShape } from './workshop-checks.js';

// docs/WORKSHOP.md part 1 (workshop-run.ts's WORKSHOP_PARTS), in the shard with the files that read its documents.
describeWorkshopShape();
describeWorkshopPart(1);
